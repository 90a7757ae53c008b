//! The load tool's error type: what went wrong, and with which broker step.

/// A failure of the load tool.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BenchError {
    /// The command line cannot be obeyed.
    #[error("usage: {0}")]
    Usage(String),
    /// A client step against the broker failed (connect, attach, send, receive, settle).
    #[error("{step}: {detail}")]
    Broker {
        /// What the client was doing.
        step: &'static str,
        /// The client library's message.
        detail: String,
    },
    /// The broker did not answer within the scenario's bound.
    #[error("{0}: the broker did not answer in time")]
    TimedOut(&'static str),
    /// Reading or writing a report file.
    #[error("{path}: {source}")]
    File {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A report file that is not a report.
    #[error("{path}: not a busbar-bench report: {source}")]
    Report {
        /// The file.
        path: String,
        /// Why.
        source: serde_json::Error,
    },
}

impl BenchError {
    /// Wraps a client library error with the step it happened in.
    pub(crate) fn broker(step: &'static str, error: impl std::fmt::Display) -> Self {
        Self::Broker {
            step,
            detail: error.to_string(),
        }
    }
}
