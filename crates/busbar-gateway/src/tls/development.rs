//! The development CA: a local certificate authority and a server certificate for this machine
//! that it signs, kept in one directory (`ca.crt`, `ca.key`, `server.crt`, `server.key`; the
//! keys readable by their owner only). Created on first use and reused afterwards, so that a
//! developer trusts `ca.crt` once.
//!
//! The set appears whole or not at all: it is written into a fresh sibling directory that is
//! then renamed into place. A crash leaves no half set behind, and of two brokers creating it
//! at once, one wins the rename and the other uses the winner's set.

mod mint;
#[cfg(test)]
mod tests;

use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Write as _};
use std::path::{Path, PathBuf};

use tokio_rustls::rustls::client::{verify_server_cert_signed_by_trust_anchor, verify_server_name};
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use tokio_rustls::rustls::server::ParsedCertificate;
use tokio_rustls::rustls::{self, RootCertStore};
use uuid::Uuid;

use super::identity::provider;
use super::{Identity, TlsError};

const CA_CERT: &str = "ca.crt";
const CA_KEY: &str = "ca.key";
const SERVER_CERT: &str = "server.crt";
const SERVER_KEY: &str = "server.key";

/// The development certificates of one directory.
#[derive(Debug)]
pub struct DevelopmentCa {
    /// The CA's certificate (`ca.crt`, an absolute path): what a client is told to trust.
    pub ca_cert: PathBuf,
    /// The server's certificate, signed by the CA, and its key.
    pub identity: Identity,
    /// Whether this call created the set (rather than reusing it).
    pub created: bool,
}

impl DevelopmentCa {
    /// The development certificates in `dir`. When `dir/ca.crt` exists the set is reused,
    /// after checking that each key is its certificate's and that a client trusting the CA
    /// accepts the server certificate for `localhost`, `127.0.0.1` and `::1` now; a set that
    /// fails is an error (the CA may be trusted somewhere, so it is not replaced behind the
    /// user's back). Otherwise a new set is created.
    pub fn load_or_create(dir: &Path) -> Result<DevelopmentCa, TlsError> {
        let dir = std::path::absolute(dir).map_err(TlsError::io("resolve", dir))?;
        let ca_cert = dir.join(CA_CERT);
        match fs::metadata(&ca_cert) {
            Ok(_) => load(&dir),
            Err(error) if error.kind() == ErrorKind::NotFound => create(&dir),
            Err(error) => Err(TlsError::io("read", ca_cert)(error)),
        }
    }
}

/// Reuses the set in `dir`.
fn load(dir: &Path) -> Result<DevelopmentCa, TlsError> {
    check(dir).map_err(|source| TlsError::Development {
        dir: dir.to_owned(),
        source: Box::new(source),
    })
}

fn check(dir: &Path) -> Result<DevelopmentCa, TlsError> {
    let ca_cert = dir.join(CA_CERT);
    let ca = Identity::from_pem_files(&ca_cert, &dir.join(CA_KEY))?;
    let identity = Identity::from_pem_files(&dir.join(SERVER_CERT), &dir.join(SERVER_KEY))?;
    for name in mint::SERVER_NAMES {
        accepted(ca.leaf(), &identity, name, UnixTime::now())
            .map_err(|source| TlsError::NotIssued { name, source })?;
    }
    Ok(DevelopmentCa {
        ca_cert,
        identity,
        created: false,
    })
}

/// Whether a client that trusts `ca` accepts `identity`'s chain for `name` (a DNS name or an
/// IP address) at `now`.
fn accepted(
    ca: &CertificateDer<'_>,
    identity: &Identity,
    name: &str,
    now: UnixTime,
) -> Result<(), rustls::Error> {
    let name =
        ServerName::try_from(name).map_err(|error| rustls::Error::General(error.to_string()))?;
    let mut roots = RootCertStore::empty();
    roots.add(ca.clone())?;
    let leaf = ParsedCertificate::try_from(identity.leaf())?;
    let algorithms = provider().signature_verification_algorithms.all;
    verify_server_cert_signed_by_trust_anchor(
        &leaf,
        &roots,
        &identity.chain[1..],
        now,
        algorithms,
    )?;
    verify_server_name(&leaf, &name)
}

/// Creates a new set in `dir`, or reuses the one another broker created meanwhile.
fn create(dir: &Path) -> Result<DevelopmentCa, TlsError> {
    let minted = mint::mint()?;
    let parent = dir.parent().ok_or_else(|| TlsError::Io {
        action: "create",
        path: dir.to_owned(),
        source: std::io::Error::other("it has no parent directory"),
    })?;
    fs::create_dir_all(parent).map_err(TlsError::io("create", parent))?;
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    let staging = parent.join(format!(".{name}.new-{}", Uuid::new_v4().simple()));
    let files = [
        (CA_CERT, &minted.ca_cert, false),
        (CA_KEY, &minted.ca_key, true),
        (SERVER_CERT, &minted.server_cert, false),
        (SERVER_KEY, &minted.server_key, true),
    ];
    let placed = fs::create_dir(&staging)
        .map_err(TlsError::io("create", &staging))
        .and_then(|()| {
            files
                .iter()
                .try_for_each(|(file, text, private)| write(&staging.join(file), text, *private))
        })
        .and_then(|()| fs::rename(&staging, dir).map_err(TlsError::io("create", dir)));
    match placed {
        Ok(()) => {
            sync_directory(parent);
            Ok(DevelopmentCa {
                ca_cert: dir.join(CA_CERT),
                identity: minted.identity,
                created: true,
            })
        }
        Err(error) => {
            let _ = fs::remove_dir_all(&staging);
            // Another broker renamed its set into place first: use that one.
            if dir.join(CA_CERT).exists() {
                load(dir)
            } else {
                Err(error)
            }
        }
    }
}

/// Writes a new file, durably; `private` ones are readable and writable by their owner only.
fn write(path: &Path, text: &str, private: bool) -> Result<(), TlsError> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(if private { 0o600 } else { 0o644 });
    }
    #[cfg(not(unix))]
    let _ = private;
    let mut file = options.open(path).map_err(TlsError::io("create", path))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(TlsError::io("write", path))
}

/// Makes a rename in `dir` durable where the platform allows it. Best effort: if it is lost
/// in a crash, the next start creates a new set.
fn sync_directory(dir: &Path) {
    if let Ok(directory) = File::open(dir) {
        let _ = directory.sync_all();
    }
}
