//! One process at a time on a tool's output: a lock file beside it, held
//! for as long as the run lasts and let go by the operating system however
//! the process ends.

use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::path::{Path, PathBuf};

/// Holds the output of a run (a match state, a datagen file) for as long as
/// it is kept: a second process on the same output (a scheduler's retry
/// while the first still runs) is refused instead of writing the same
/// records into the same file.
pub struct RunLock {
    _file: File,
}

/// Why the lock was not taken.
#[derive(Debug)]
pub enum LockError {
    /// Another process holds it.
    Held(PathBuf),
    /// The lock file could not be opened or locked.
    Io(PathBuf, io::Error),
}

impl std::fmt::Display for LockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LockError::Held(path) => write!(
                f,
                "another process is running on it now (it holds {})",
                path.display()
            ),
            LockError::Io(path, e) => write!(f, "cannot lock {}: {e}", path.display()),
        }
    }
}

impl std::error::Error for LockError {}

impl RunLock {
    /// Takes the lock of the run that writes `output` (the file
    /// `<output>.lock` beside it), or says that another process holds it.
    pub fn take(output: &Path) -> Result<RunLock, LockError> {
        let mut name = output.as_os_str().to_owned();
        name.push(".lock");
        let path = PathBuf::from(name);
        let file = match OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
        {
            Ok(file) => file,
            Err(e) => return Err(LockError::Io(path, e)),
        };
        match file.try_lock() {
            Ok(()) => Ok(RunLock { _file: file }),
            Err(TryLockError::WouldBlock) => Err(LockError::Held(path)),
            Err(TryLockError::Error(e)) => Err(LockError::Io(path, e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_until_the_first_lets_go() {
        let dir = crate::tools::scratch_dir("run-lock");
        let output = dir.path().join("data.bin");
        let first = RunLock::take(&output).unwrap();
        assert!(matches!(RunLock::take(&output), Err(LockError::Held(_))));
        drop(first);
        RunLock::take(&output).unwrap();
    }
}
