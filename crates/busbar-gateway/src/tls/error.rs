//! What can go wrong when reading, creating or using certificates.

use std::path::PathBuf;

use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem;

/// Why TLS cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A PEM file cannot be read or holds no item of the kind needed.
    #[error("cannot read {path}: {source}")]
    Pem {
        /// The file.
        path: PathBuf,
        /// What the PEM reader found.
        source: pem::Error,
    },
    /// A certificate file without a certificate.
    #[error("{path} holds no PEM certificate")]
    NoCertificate {
        /// The file.
        path: PathBuf,
    },
    /// A certificate and key that rustls refuses together (most often: the key is not the
    /// certificate's).
    #[error("{cert} and {key} are not a usable certificate and key: {source}")]
    Identity {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// What rustls found.
        source: rustls::Error,
    },
    /// A development server certificate that a client trusting the development CA does not
    /// accept for one of the names it must serve.
    #[error("server.crt is not accepted for {name} by a client trusting ca.crt: {source}")]
    NotIssued {
        /// The name checked.
        name: &'static str,
        /// What the check found (an expired or foreign certificate, say).
        source: rustls::Error,
    },
    /// A file or directory operation failed.
    #[error("cannot {action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// On what.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// Generating a key or a certificate failed.
    #[error("cannot create the development certificates: {0}")]
    Generate(#[from] rcgen::Error),
    /// An existing development directory does not hold a usable set.
    #[error(
        "the development certificates in {dir} cannot be used ({source}); delete the directory \
         to have new ones created"
    )]
    Development {
        /// The directory.
        dir: PathBuf,
        /// What is wrong with it.
        source: Box<TlsError>,
    },
    /// rustls refuses the configuration.
    #[error("cannot configure TLS: {0}")]
    Config(#[from] rustls::Error),
}

impl TlsError {
    /// An [`TlsError::Io`] maker for `map_err`.
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> TlsError {
        let path = path.into();
        move |source| TlsError::Io {
            action,
            path,
            source,
        }
    }
}
