//! Minting a development CA and the server certificate it signs (rcgen, ECDSA P-256 keys).
//!
//! Both follow what strict verifiers ask (Python 3.13's `VERIFY_X509_STRICT` among them): the
//! CA has critical basic constraints, key usages to sign certificates and a subject key
//! identifier; the server certificate is not a CA, names its issuer's key, carries its names
//! as subject alternative names and is for server authentication.

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};
use time::{Duration, OffsetDateTime};
use tokio_rustls::rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use uuid::Uuid;

use crate::tls::{Identity, TlsError};

/// The names the server certificate is for: every way a connection string on this machine
/// names the broker.
pub(super) const SERVER_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];
/// How long both certificates are valid from their creation: a development CA is trusted once
/// and should not need replacing.
pub(super) const VALIDITY: Duration = Duration::days(3650);
/// How far before their creation both certificates are valid, for clocks slightly behind.
const BACKDATE: Duration = Duration::days(1);

/// A development CA and a server certificate, as PEM texts, and the server's identity.
pub(super) struct Minted {
    pub(super) ca_cert: String,
    pub(super) ca_key: String,
    pub(super) server_cert: String,
    pub(super) server_key: String,
    pub(super) identity: Identity,
}

/// Mints a CA valid from now (less a day) for [`VALIDITY`], and a server certificate for
/// [`SERVER_NAMES`] it signs, each with a new key.
pub(super) fn mint() -> Result<Minted, TlsError> {
    let now = OffsetDateTime::now_utc();
    let ca_key = KeyPair::generate()?;
    let mut ca = CertificateParams::default();
    // Unique, so that the CAs of several data directories can be trusted side by side.
    let id = Uuid::new_v4().simple().to_string();
    ca.distinguished_name = name(&format!(
        "Busbar development CA {} {}",
        now.date(),
        &id[..8]
    ));
    ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    ca.not_before = now - BACKDATE;
    ca.not_after = now + VALIDITY;
    let ca_cert = ca.self_signed(&ca_key)?;

    let server_key = KeyPair::generate()?;
    let mut server = CertificateParams::new(SERVER_NAMES.map(str::to_owned).to_vec())?;
    server.distinguished_name = name("localhost");
    server.is_ca = IsCa::ExplicitNoCa;
    server.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    server.use_authority_key_identifier_extension = true;
    server.not_before = ca.not_before;
    server.not_after = ca.not_after;
    let server_cert = server.signed_by(&server_key, &Issuer::new(ca, &ca_key))?;

    let identity = Identity {
        chain: vec![server_cert.der().clone()],
        key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server_key.serialize_der())),
    };
    Ok(Minted {
        ca_cert: ca_cert.pem(),
        ca_key: ca_key.serialize_pem(),
        server_cert: server_cert.pem(),
        server_key: server_key.serialize_pem(),
        identity,
    })
}

/// A distinguished name of organisation `Busbar` and common name `common_name`.
fn name(common_name: &str) -> DistinguishedName {
    let mut name = DistinguishedName::new();
    name.push(DnType::OrganizationName, "Busbar");
    name.push(DnType::CommonName, common_name);
    name
}
