//! The runtime's error: each variant is exactly one PMIx status.

use std::borrow::Cow;

use pmix_core::{BuildError, DistanceError, PmixError, SourceError, Status};

/// Why a runtime call failed. Each variant maps to exactly one `pmix_status_t`
/// through [`PmixError::status`]; the C ABI returns that status.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The library is not initialised, or was finalised (`PMIX_ERR_INIT`).
    #[error("the PMIx library is not initialized (or was finalized)")]
    Init,
    /// A blocking call was made on the instance's progress thread, from a callback or
    /// event handler (`PMIX_ERR_WOULD_BLOCK`). Nothing was done.
    #[error("{call}: blocking call made on the PMIx progress thread")]
    WouldBlock {
        /// The PMIx name of the call (`"PMIx_Compute_distances"`).
        call: &'static str,
    },
    /// The progress engine has been stopped (`PMIX_ERR_NOT_AVAILABLE`).
    #[error("the PMIx progress engine has been stopped")]
    NotAvailable,
    /// The request cannot be answered by this process alone and no server can be
    /// reached to relay it to (`PMIX_ERR_UNREACH`).
    #[error("{0}")]
    Unreach(Cow<'static, str>),
    /// An argument is invalid (`PMIX_ERR_BAD_PARAM`); the text says which and why.
    #[error("bad parameter: {0}")]
    BadParam(Cow<'static, str>),
    /// A required directive (`PMIX_INFO_REQD`) is not supported
    /// (`PMIX_ERR_NOT_SUPPORTED`).
    #[error("not supported: {0}")]
    NotSupported(Cow<'static, str>),
    /// The distance query has no answer (its own status: `PMIX_ERR_NOT_FOUND`,
    /// `PMIX_ERR_BAD_PARAM`, …).
    #[error(transparent)]
    Distance(#[from] DistanceError),
    /// The operating system refused something the runtime needs (a thread)
    /// (`PMIX_ERROR`).
    #[error("{0}")]
    Os(String),
    /// The library failed inside: an accepted request's computation panicked on the
    /// progress thread (`PMIX_ERROR`). The text says what panicked and why.
    #[error("internal error: {0}")]
    Internal(String),
    /// A PMIx status another party decided, or one of the protocol's answers: the
    /// server's reply to a request (`PMIX_ERR_TIMEOUT`, `PMIX_ERR_LOST_CONNECTION`,
    /// …), a key that is not there (`PMIX_ERR_NOT_FOUND`), a launch environment
    /// without a rank (`PMIX_ERR_DATA_VALUE_NOT_FOUND`).
    #[error("{} ({why})", .status.text())]
    Status {
        /// The status.
        status: Status,
        /// What gave it.
        why: Cow<'static, str>,
    },
}

impl PmixError for Error {
    fn status(&self) -> Status {
        match self {
            Error::Init => Status::ERR_INIT,
            Error::WouldBlock { .. } => Status::ERR_WOULD_BLOCK,
            Error::NotAvailable => Status::ERR_NOT_AVAILABLE,
            Error::Unreach(_) => Status::ERR_UNREACH,
            Error::BadParam(_) => Status::ERR_BAD_PARAM,
            Error::NotSupported(_) => Status::ERR_NOT_SUPPORTED,
            Error::Distance(e) => e.status(),
            Error::Os(_) | Error::Internal(_) => Status::ERROR,
            Error::Status { status, .. } => *status,
        }
    }
}

/// Why the instance's topology could not be loaded.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The source could not be chosen or read.
    #[error("topology source {name:?}: {error}")]
    Source {
        /// The source name (`xml:/path`, `sysfs`).
        name: String,
        /// What the chooser or the backend said.
        error: SourceError,
    },
    /// The hostname given at init could not be applied to the device uuids.
    #[error("hostname: {0}")]
    Hostname(BuildError),
}

impl PmixError for LoadError {
    /// The source's status (`PMIX_ERR_NOT_FOUND` for a missing file, …), or
    /// `PMIX_ERR_BAD_PARAM` for a host name the topology refuses.
    fn status(&self) -> Status {
        match self {
            LoadError::Source { error, .. } => error.status(),
            LoadError::Hostname(e) => e.status(),
        }
    }
}

impl Error {
    /// The error of a request whose server connection was lost before its answer
    /// (`PMIX_ERR_UNREACH`).
    pub(crate) fn lost() -> Error {
        Error::Unreach("the connection to the PMIx server was lost".into())
    }

    /// The error of a key that is not 1 to [`MAX_KEYLEN`](pmix_wire::keys::MAX_KEYLEN)
    /// bytes without NUL (`PMIX_ERR_BAD_PARAM`).
    pub(crate) fn bad_key() -> Error {
        Error::BadParam("a key is 1 to 511 bytes without NUL".into())
    }
}
