//! The one way the tools write a whole file: beside its destination, synced
//! to disk, then renamed over it, so that a reader (or a run resumed after a
//! kill at any moment) sees the old file or the new one, never part of one.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Replaces `path` with `contents`: written to a temporary file beside it
/// (see [`temporary_path`]), fsynced, renamed into place, and the directory
/// fsynced so the rename itself survives a power cut.
pub fn write_atomically(path: &Path, contents: &[u8]) -> io::Result<()> {
    replace_through(path, &temporary_path(path), contents)
}

/// Checks, before any work is done for it, that [`write_atomically`] can
/// write `path`: it is not a directory, and its directory exists and takes
/// a new file (the temporary file of a write, created and removed).
pub fn check_writable(path: &Path) -> io::Result<()> {
    if path.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "it is a directory",
        ));
    }
    let temporary = temporary_path(path);
    File::create(&temporary)?;
    std::fs::remove_file(&temporary)
}

/// [`write_atomically`] through the temporary file `temporary`, removed
/// when the write fails.
fn replace_through(path: &Path, temporary: &Path, contents: &[u8]) -> io::Result<()> {
    let written = File::create(temporary).and_then(|mut file| {
        file.write_all(contents)?;
        file.sync_all()
    });
    if let Err(error) = written.and_then(|()| std::fs::rename(temporary, path)) {
        let _ = std::fs::remove_file(temporary);
        return Err(error);
    }
    sync_directory_of(path)
}

/// The name the contents of `path` are written under before the rename,
/// `<path>.<process id>-<write number>.tmp`: a name of this process and
/// call alone, so that two writers of one path (two runs on one output,
/// two threads) never write into or rename each other's half-written file.
fn temporary_path(path: &Path) -> PathBuf {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let mut name = OsString::from(path.as_os_str());
    name.push(format!(
        ".{}-{}.tmp",
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ));
    PathBuf::from(name)
}

/// Makes a rename or a newly created file in `path`'s directory durable.
pub fn sync_directory_of(path: &Path) -> io::Result<()> {
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    // Directories cannot be opened for syncing everywhere (Windows); the
    // rename has happened either way.
    match File::open(directory) {
        Ok(handle) => handle.sync_all().or(Ok(())),
        Err(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_replaced_whole_and_no_temporary_is_left() {
        let dir = crate::tools::scratch_dir("atomic-replace");
        let path = dir.path().join("state.json");
        write_atomically(&path, b"first").unwrap();
        write_atomically(&path, b"second, longer").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second, longer");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![OsString::from("state.json")]);
    }

    /// Two writers of one path at once (two runs on one output) each write
    /// a temporary file of their own: every write succeeds and the file
    /// is one writer's contents, whole.
    #[test]
    fn writers_of_one_path_at_once_never_share_a_temporary_file() {
        let dir = crate::tools::scratch_dir("atomic-race");
        let path = dir.path().join("net.nnue");
        let contents: Vec<Vec<u8>> = (1..=4u8)
            .map(|writer| vec![writer; 4096 * usize::from(writer)])
            .collect();
        std::thread::scope(|scope| {
            for bytes in &contents {
                let path = &path;
                scope.spawn(move || {
                    for _ in 0..50 {
                        write_atomically(path, bytes).unwrap();
                    }
                });
            }
        });
        assert!(contents.contains(&std::fs::read(&path).unwrap()));
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![OsString::from("net.nnue")]);
    }

    #[test]
    fn a_failed_write_leaves_the_old_file() {
        let dir = crate::tools::scratch_dir("atomic-fail");
        let path = dir.path().join("net.nnue");
        write_atomically(&path, b"old").unwrap();
        // A directory where the temporary file would go makes the write fail.
        let temporary = temporary_path(&path);
        std::fs::create_dir(&temporary).unwrap();
        assert!(replace_through(&path, &temporary, b"new").is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
    }
}
