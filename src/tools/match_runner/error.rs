//! Why `agon match` (or `agon stats`) could not do what it was asked: a
//! command line, a file, an engine or the run itself, each told apart.

use super::options::UsageError;
use std::fmt;
use std::path::{Path, PathBuf};

/// What stopped a match, or kept it from starting.
#[derive(Debug)]
pub enum MatchError {
    /// The command line is wrong.
    Usage(UsageError),
    /// A file could not be read or written.
    File {
        /// The file.
        path: PathBuf,
        /// What was being done with it, e.g. "read the state".
        action: &'static str,
        /// The system's reason.
        source: std::io::Error,
    },
    /// A file was read but holds something unusable.
    Content {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// The openings cannot be used.
    Openings(String),
    /// An engine could not be started or set up, or failed during the run.
    Engine(String),
    /// The run stopped before its end for a reason other than an engine.
    Stopped(String),
}

impl MatchError {
    /// A failed file operation.
    pub fn file(path: &Path, action: &'static str, source: std::io::Error) -> MatchError {
        MatchError::File {
            path: path.to_path_buf(),
            action,
            source,
        }
    }

    /// A file with unusable content.
    pub fn content(path: &Path, problem: impl fmt::Display) -> MatchError {
        MatchError::Content {
            path: path.to_path_buf(),
            problem: problem.to_string(),
        }
    }
}

impl fmt::Display for MatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MatchError::Usage(error) => write!(f, "{error}"),
            MatchError::File {
                path,
                action,
                source,
            } => write!(f, "cannot {action} {}: {source}", path.display()),
            MatchError::Content { path, problem } => write!(f, "{}: {problem}", path.display()),
            MatchError::Openings(message)
            | MatchError::Engine(message)
            | MatchError::Stopped(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for MatchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            MatchError::Usage(error) => Some(error),
            MatchError::File { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<UsageError> for MatchError {
    fn from(error: UsageError) -> MatchError {
        MatchError::Usage(error)
    }
}
