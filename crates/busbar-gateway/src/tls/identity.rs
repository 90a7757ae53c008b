//! The server's certificate chain and private key, as rustls takes them: read from PEM files
//! (`--tls-cert`, `--tls-key`), or issued by the development CA.

use std::path::Path;
use std::sync::Arc;

use tokio_rustls::rustls::crypto::{CryptoProvider, ring};
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::sign::CertifiedKey;

use super::TlsError;

/// A certificate chain, leaf first, and the leaf's private key.
pub struct Identity {
    pub(crate) chain: Vec<CertificateDer<'static>>,
    pub(crate) key: PrivateKeyDer<'static>,
}

impl Identity {
    /// Reads the certificate chain (leaf first, as the server sends it) from the PEM file
    /// `cert`, and the leaf's private key (PKCS#8, PKCS#1 or SEC1) from the PEM file `key`;
    /// refuses a key that is not the leaf's.
    pub fn from_pem_files(cert: &Path, key: &Path) -> Result<Identity, TlsError> {
        let identity = Identity {
            chain: read_certificates(cert)?,
            key: PrivateKeyDer::from_pem_file(key).map_err(|source| TlsError::Pem {
                path: key.to_owned(),
                source,
            })?,
        };
        CertifiedKey::from_der(
            identity.chain.clone(),
            identity.key.clone_key(),
            &provider(),
        )
        .map_err(|source| TlsError::Identity {
            cert: cert.to_owned(),
            key: key.to_owned(),
            source,
        })?;
        Ok(identity)
    }

    /// The leaf certificate.
    pub fn leaf(&self) -> &CertificateDer<'static> {
        // Never empty: `read_certificates` refuses a file without one, and the development CA
        // issues one.
        &self.chain[0]
    }
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identity")
            .field("certificates", &self.chain.len())
            .finish_non_exhaustive()
    }
}

/// Every certificate in the PEM file at `path`, at least one.
fn read_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let pem_error = |source| TlsError::Pem {
        path: path.to_owned(),
        source,
    };
    let chain = CertificateDer::pem_file_iter(path)
        .map_err(pem_error)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(pem_error)?;
    if chain.is_empty() {
        return Err(TlsError::NoCertificate {
            path: path.to_owned(),
        });
    }
    Ok(chain)
}

/// rustls's cryptography from `ring` (aws-lc-rs, its default, needs cmake and nasm to build).
pub(crate) fn provider() -> Arc<CryptoProvider> {
    Arc::new(ring::default_provider())
}
