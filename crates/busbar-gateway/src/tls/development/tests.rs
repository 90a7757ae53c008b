//! The development set created once and reused, what its certificates are good for, damaged
//! and racing sets, and PEM files read as `--tls-cert`/`--tls-key` would be.

#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::*;
use crate::tls::TlsConfig;

/// A directory under the system temp dir, unique per test, removed when dropped.
struct TestDir(PathBuf);

impl TestDir {
    fn new(name: &str) -> TestDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let unique = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!(
            "busbar-admin-tls-{name}-{}-{unique}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path).unwrap();
        TestDir(path)
    }

    fn tls(&self) -> PathBuf {
        self.0.join("tls")
    }

    /// The names in the directory.
    fn entries(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(&self.0)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn ca_of(set: &DevelopmentCa) -> CertificateDer<'static> {
    let dir = set.ca_cert.parent().unwrap();
    Identity::from_pem_files(&set.ca_cert, &dir.join(CA_KEY))
        .unwrap()
        .leaf()
        .clone()
}

/// What is wrong with a development set that cannot be reused.
fn why_unusable(error: &TlsError) -> &TlsError {
    match error {
        TlsError::Development { source, .. } => source,
        other => panic!("not about a development set: {other:?}"),
    }
}

fn years_from_now(years: u64) -> UnixTime {
    let now = UnixTime::now().as_secs();
    UnixTime::since_unix_epoch(Duration::from_secs(now + years * 365 * 24 * 3600))
}

#[test]
fn a_set_is_created_once_and_then_reused() {
    let scratch = TestDir::new("reuse");
    let created = DevelopmentCa::load_or_create(&scratch.tls()).unwrap();
    assert!(created.created);
    assert_eq!(created.ca_cert, scratch.tls().join("ca.crt"));
    assert!(created.ca_cert.is_absolute());
    assert_eq!(scratch.entries(), ["tls"], "no staging directory is left");
    let ca_text = fs::read_to_string(&created.ca_cert).unwrap();
    assert!(ca_text.starts_with("-----BEGIN CERTIFICATE-----"));

    let reused = DevelopmentCa::load_or_create(&scratch.tls()).unwrap();
    assert!(!reused.created);
    assert_eq!(reused.ca_cert, created.ca_cert);
    assert_eq!(fs::read_to_string(&reused.ca_cert).unwrap(), ca_text);
    assert_eq!(reused.identity.leaf(), created.identity.leaf());
    assert_eq!(reused.identity.key, created.identity.key);
    TlsConfig::new(reused.identity).unwrap();
}

#[cfg(unix)]
#[test]
fn only_the_owner_reads_the_keys() {
    use std::os::unix::fs::PermissionsExt as _;
    let scratch = TestDir::new("modes");
    DevelopmentCa::load_or_create(&scratch.tls()).unwrap();
    for (file, private) in [
        ("ca.key", true),
        ("server.key", true),
        ("ca.crt", false),
        ("server.crt", false),
    ] {
        let mode = fs::metadata(scratch.tls().join(file))
            .unwrap()
            .permissions()
            .mode();
        if private {
            assert_eq!(mode & 0o777, 0o600, "{file}");
        } else {
            assert_eq!(mode & 0o044, 0o044, "{file} is readable by all");
        }
    }
}

#[test]
fn the_server_certificate_is_for_this_machine_for_ten_years() {
    let scratch = TestDir::new("names");
    let set = DevelopmentCa::load_or_create(&scratch.tls()).unwrap();
    let ca = ca_of(&set);
    for name in ["localhost", "127.0.0.1", "::1"] {
        accepted(&ca, &set.identity, name, UnixTime::now()).unwrap();
        accepted(&ca, &set.identity, name, years_from_now(9)).unwrap();
    }
    for name in ["example.com", "localhost.localdomain", "10.0.0.1"] {
        assert!(
            accepted(&ca, &set.identity, name, UnixTime::now()).is_err(),
            "{name}"
        );
    }
    assert!(accepted(&ca, &set.identity, "localhost", years_from_now(11)).is_err());
    // Nor is it accepted by a client trusting another development CA.
    let other = TestDir::new("names-other");
    let other = DevelopmentCa::load_or_create(&other.tls()).unwrap();
    let error = accepted(&ca_of(&other), &set.identity, "localhost", UnixTime::now());
    assert!(error.is_err());
}

#[test]
fn a_damaged_set_is_refused_and_left_alone() {
    let scratch = TestDir::new("damaged");
    let dir = scratch.tls();
    DevelopmentCa::load_or_create(&dir).unwrap();
    let ca_text = fs::read_to_string(dir.join(CA_CERT)).unwrap();

    // The CA's key in place of the server's.
    let server_key = fs::read(dir.join(SERVER_KEY)).unwrap();
    fs::copy(dir.join(CA_KEY), dir.join(SERVER_KEY)).unwrap();
    let error = DevelopmentCa::load_or_create(&dir).unwrap_err();
    assert!(
        matches!(why_unusable(&error), TlsError::Identity { .. }),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(message.contains("server.key"), "{message}");
    assert!(message.contains("delete the directory"), "{message}");
    fs::write(dir.join(SERVER_KEY), server_key).unwrap();

    // A server certificate and key from another set: not issued by this CA.
    let other = TestDir::new("damaged-other");
    DevelopmentCa::load_or_create(&other.tls()).unwrap();
    for file in [SERVER_CERT, SERVER_KEY] {
        fs::copy(other.tls().join(file), dir.join(file)).unwrap();
    }
    let error = DevelopmentCa::load_or_create(&dir).unwrap_err();
    assert!(
        matches!(why_unusable(&error), TlsError::NotIssued { .. }),
        "{error:?}"
    );

    // A missing file.
    fs::remove_file(dir.join(CA_KEY)).unwrap();
    let message = DevelopmentCa::load_or_create(&dir).unwrap_err().to_string();
    assert!(message.contains("ca.key"), "{message}");

    assert_eq!(fs::read_to_string(dir.join(CA_CERT)).unwrap(), ca_text);
}

#[test]
fn a_directory_in_the_way_is_an_error_and_leaves_nothing_behind() {
    let scratch = TestDir::new("in-the-way");
    fs::create_dir(scratch.tls()).unwrap();
    fs::write(scratch.tls().join("notes.txt"), "mine").unwrap();
    let error = DevelopmentCa::load_or_create(&scratch.tls()).unwrap_err();
    assert!(
        matches!(
            error,
            TlsError::Io {
                action: "create",
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(scratch.entries(), ["tls"]);
}

#[test]
fn brokers_creating_a_set_at_once_all_use_the_same_one() {
    let scratch = TestDir::new("race");
    let dir = scratch.tls();
    let sets: Vec<DevelopmentCa> = std::thread::scope(|scope| {
        let racers: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| DevelopmentCa::load_or_create(&dir).unwrap()))
            .collect();
        racers
            .into_iter()
            .map(|racer| racer.join().unwrap())
            .collect()
    });
    let leaf = ca_of(&sets[0]);
    for set in &sets {
        assert_eq!(ca_of(set), leaf);
        assert_eq!(set.identity.leaf(), sets[0].identity.leaf());
    }
    assert!(sets.iter().any(|set| set.created));
    assert_eq!(scratch.entries(), ["tls"], "no staging directory is left");
}

#[test]
fn pem_files_are_read_as_given() {
    let scratch = TestDir::new("pem");
    let dir = scratch.tls();
    DevelopmentCa::load_or_create(&dir).unwrap();
    let cert = dir.join(SERVER_CERT);
    let key = dir.join(SERVER_KEY);
    let identity = Identity::from_pem_files(&cert, &key).unwrap();
    assert_eq!(identity.chain.len(), 1);

    // A chain file, leaf first, keeps every certificate.
    let chain = scratch.0.join("chain.pem");
    let text = fs::read_to_string(&cert).unwrap() + &fs::read_to_string(dir.join(CA_CERT)).unwrap();
    fs::write(&chain, text).unwrap();
    let identity = Identity::from_pem_files(&chain, &key).unwrap();
    assert_eq!(identity.chain.len(), 2);
    TlsConfig::new(identity).unwrap();

    let error = Identity::from_pem_files(&cert, &dir.join(CA_KEY)).unwrap_err();
    assert!(matches!(error, TlsError::Identity { .. }), "{error:?}");
    let error = Identity::from_pem_files(&key, &key).unwrap_err();
    assert!(matches!(error, TlsError::NoCertificate { .. }), "{error:?}");
    let error = Identity::from_pem_files(&cert, &cert).unwrap_err();
    assert!(matches!(error, TlsError::Pem { .. }), "{error:?}");
    let missing = scratch.0.join("missing.pem");
    let error = Identity::from_pem_files(&missing, &key).unwrap_err();
    assert!(error.to_string().contains("missing.pem"), "{error}");
}
