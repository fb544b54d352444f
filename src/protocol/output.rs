//! The one writer of protocol output, shared by every thread: whole lines,
//! never interleaved, flushed as soon as they are written.

use std::fmt::Display;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// A cloneable handle on the protocol's output stream.
#[derive(Clone)]
pub(crate) struct Output {
    sink: Arc<Mutex<Box<dyn Write + Send>>>,
}

impl Output {
    /// Wraps a stream (stdout in the program, a buffer in tests).
    pub(crate) fn new(sink: impl Write + Send + 'static) -> Output {
        Output {
            sink: Arc::new(Mutex::new(Box::new(sink))),
        }
    }

    /// Writes one line and flushes it.
    pub(crate) fn line(&self, text: &str) {
        self.lines([text]);
    }

    /// Writes several lines as one block (no other thread's line can come
    /// between them) and flushes once.
    pub(crate) fn lines<S: AsRef<str>>(&self, lines: impl IntoIterator<Item = S>) {
        Self::write(&mut self.lock(), lines);
    }

    /// Writes `lines`, ending with a `bestmove`, unless the search that
    /// `answered` belongs to has been answered already: one thread claims
    /// the answer and the other's comes too late. Returns whether these
    /// lines were the answer.
    pub(crate) fn answer_once<S: AsRef<str>>(
        &self,
        answered: &AtomicBool,
        lines: impl IntoIterator<Item = S>,
    ) -> bool {
        let mut sink = self.lock();
        // Claimed under the lock, so that no line of the search can follow
        // its answer (see `before_answer`).
        let first = !answered.swap(true, Ordering::SeqCst);
        if first {
            Self::write(&mut sink, lines);
        }
        first
    }

    /// Writes a line about a search unless the search has been answered.
    pub(crate) fn before_answer(&self, answered: &AtomicBool, text: &str) {
        let mut sink = self.lock();
        if !answered.load(Ordering::SeqCst) {
            Self::write(&mut sink, [text]);
        }
    }

    fn lock(&self) -> MutexGuard<'_, Box<dyn Write + Send>> {
        // A poisoned lock only means another thread panicked mid-write; the
        // stream itself is still usable.
        self.sink.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn write<S: AsRef<str>>(sink: &mut Box<dyn Write + Send>, lines: impl IntoIterator<Item = S>) {
        let written = lines
            .into_iter()
            .try_for_each(|line| writeln!(sink, "{}", line.as_ref()))
            .and_then(|()| sink.flush());
        if let Err(e) = written {
            log::warn!("cannot write protocol output: {e}");
        }
    }

    /// Writes `info string error: <what>`, the one reply to a bad line.
    pub(crate) fn error(&self, what: impl Display) {
        self.line(&format!("info string error: {what}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A buffer that the test can still read after handing a clone to `Output`.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().write(bytes)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn blocks_stay_whole_across_threads() {
        let buffer = Shared::default();
        let output = Output::new(buffer.clone());
        let writers: Vec<_> = (0..4)
            .map(|t| {
                let output = output.clone();
                std::thread::spawn(move || {
                    for _ in 0..200 {
                        output.lines([format!("{t} a"), format!("{t} b")]);
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.join().unwrap();
        }
        output.error("x");
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1601);
        for pair in lines[..1600].chunks(2) {
            let owner = pair[0].split(' ').next().unwrap();
            assert_eq!(pair[0], format!("{owner} a"));
            assert_eq!(pair[1], format!("{owner} b"));
        }
        assert_eq!(lines[1600], "info string error: x");
    }
}
