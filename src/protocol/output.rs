//! The one writer of protocol output, shared by every thread: whole lines,
//! never interleaved, flushed as soon as they are written.
//!
//! Only the writer thread touches the stream. The other threads hand it
//! whole blocks over a channel, so a thread that answers at a deadline
//! never waits behind another one that was descheduled in the middle of a
//! write to a slow or full pipe.

use crate::search::BestMove;
use std::fmt::Display;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread;
use std::time::Instant;

/// Whether a search has been answered with its `bestmove`, and when.
#[derive(Debug, Default)]
pub(crate) struct Answer {
    given: AtomicBool,
    at: OnceLock<Instant>,
    /// The move and expected reply of the last first-line `info` written
    /// for the search: an answer given for the search agrees with it.
    reported: Mutex<Option<BestMove>>,
}

impl Answer {
    /// Whether the `bestmove` has been queued.
    pub(crate) fn given(&self) -> bool {
        self.given.load(Ordering::SeqCst)
    }

    /// When the `bestmove` was queued, once it was.
    pub(crate) fn at(&self) -> Option<Instant> {
        self.at.get().copied()
    }
}

/// What the writer thread is asked to do.
enum Message {
    /// Write these lines together and flush.
    Block(Vec<String>),
    /// Tell the sender once everything before this is written.
    Drained(Sender<()>),
}

/// A cloneable handle on the protocol's output stream.
#[derive(Clone)]
pub(crate) struct Output {
    // The lock makes "check a search's answered flag, then queue a line"
    // one step (see `answer_once`); it is held only for the in-memory send.
    queue: Arc<Mutex<Sender<Message>>>,
}

impl Output {
    /// Starts the writer thread over a stream (stdout in the program, a
    /// buffer in tests).
    ///
    /// # Errors
    ///
    /// When the thread cannot be started.
    pub(crate) fn new(sink: impl Write + Send + 'static) -> io::Result<Output> {
        let (queue, messages) = mpsc::channel();
        thread::Builder::new()
            .name("output".into())
            .spawn(move || write_messages(sink, &messages))?;
        Ok(Output {
            queue: Arc::new(Mutex::new(queue)),
        })
    }

    /// Writes one line and flushes it.
    pub(crate) fn line(&self, text: &str) {
        self.lines([text]);
    }

    /// Writes several lines as one block (no other thread's line can come
    /// between them) and flushes once.
    pub(crate) fn lines<S: AsRef<str>>(&self, lines: impl IntoIterator<Item = S>) {
        Self::queue_block(&self.lock(), lines);
    }

    /// Writes the lines `answer_with` makes, ending with a `bestmove`,
    /// unless the search that `answered` belongs to has been answered
    /// already: one thread claims the answer and the other's comes too
    /// late. `answer_with` gets the move of the search's last `info` line
    /// written, if any. Returns whether these lines were the answer.
    pub(crate) fn answer_once(
        &self,
        answer: &Answer,
        answer_with: impl FnOnce(Option<BestMove>) -> Vec<String>,
    ) -> bool {
        let queue = self.lock();
        // Claimed under the lock, so that no line of the search can follow
        // its answer (see `before_answer`).
        let first = !answer.given.swap(true, Ordering::SeqCst);
        if first {
            let reported = *answer
                .reported
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            Self::queue_block(&queue, answer_with(reported));
            // Only the first claimer gets here, so the cell is still empty.
            let _ = answer.at.set(Instant::now());
        }
        first
    }

    /// Writes a line about a search unless the search has been answered;
    /// `best` is the move the line puts first, for a line of the first
    /// principal variation.
    pub(crate) fn before_answer(&self, answer: &Answer, text: &str, best: Option<BestMove>) {
        let queue = self.lock();
        if !answer.given() {
            Self::queue_block(&queue, [text]);
            if best.is_some() {
                *answer
                    .reported
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = best;
            }
        }
    }

    /// Waits until every line queued so far is written and flushed.
    pub(crate) fn drain(&self) {
        let (done, written) = mpsc::channel();
        if self.lock().send(Message::Drained(done)).is_ok() {
            // An error here means the writer is gone; nothing is left to wait for.
            let _ = written.recv();
        }
    }

    /// Writes `info string error: <what>`, the one reply to a bad line.
    pub(crate) fn error(&self, what: impl Display) {
        self.line(&format!("info string error: {what}"));
    }

    fn lock(&self) -> MutexGuard<'_, Sender<Message>> {
        // A poisoned lock only means another thread panicked while queueing;
        // the channel itself is still usable.
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn queue_block<S: AsRef<str>>(queue: &Sender<Message>, lines: impl IntoIterator<Item = S>) {
        let block = lines
            .into_iter()
            .map(|line| line.as_ref().to_owned())
            .collect();
        if queue.send(Message::Block(block)).is_err() {
            log::warn!("cannot write protocol output: the writer thread has ended");
        }
    }
}

/// The writer thread: writes each block whole and flushes it, until every
/// handle is gone.
fn write_messages(mut sink: impl Write, messages: &mpsc::Receiver<Message>) {
    for message in messages {
        match message {
            Message::Block(lines) => {
                let written = lines
                    .iter()
                    .try_for_each(|line| writeln!(sink, "{line}"))
                    .and_then(|()| sink.flush());
                if let Err(e) = written {
                    log::warn!("cannot write protocol output: {e}");
                }
            }
            Message::Drained(done) => {
                // The waiter may have given up; that is not an error.
                let _ = done.send(());
            }
        }
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
        let output = Output::new(buffer.clone()).unwrap();
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
        output.drain();
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

    /// The answer is made from the move of the last line written, and no
    /// line of the search follows it.
    #[test]
    fn an_answer_agrees_with_the_last_line_written() {
        let buffer = Shared::default();
        let output = Output::new(buffer.clone()).unwrap();
        let answer = Answer::default();
        let f1f2 = crate::rules::parse_move(&crate::rules::start_position(), "f1f2").unwrap();
        output.before_answer(&answer, "info depth 1 pv f1f2", Some((f1f2, None)));
        output.before_answer(&answer, "info depth 1 multipv 2 pv b1c1", None);
        let answered = output.answer_once(&answer, |reported| {
            vec![format!(
                "bestmove {}",
                reported.map_or("none".into(), |(mv, _)| mv.to_string())
            )]
        });
        assert!(answered);
        assert!(!output.answer_once(&answer, |_| vec!["bestmove late".into()]));
        output.before_answer(&answer, "info depth 2 pv b1c1", None);
        output.drain();
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            text.lines().collect::<Vec<_>>(),
            [
                "info depth 1 pv f1f2",
                "info depth 1 multipv 2 pv b1c1",
                "bestmove f1f2"
            ]
        );
    }
}
