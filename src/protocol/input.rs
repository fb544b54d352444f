//! The input side of the loop: reading bounded lines of bytes, and the gate
//! that lets the reader answer `isready`, `stop` and `ponderhit` itself
//! while a search runs, without ever overtaking an earlier command.

use super::command::{Command, CommandError, MAX_LINE_BYTES, parse_command};
use super::output::{Answer, Output};
use crate::search::SearchControl;
use std::io::{self, BufRead, ErrorKind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

/// One input line as the controller sees it.
#[derive(Clone, Debug)]
pub(crate) struct Line {
    /// The command, or the text of its error.
    pub command: Result<Command, String>,
    /// When the reader read it: a `go`'s time runs from here, since the
    /// one who sent it started the clock when writing it.
    pub read_at: Instant,
}

/// What the controller receives, in order.
pub(crate) enum Event {
    /// A line from the reader.
    Line(Line),
    /// The search thread has written its `bestmove` and is ending.
    SearchDone,
}

/// What the reader may know about the controller.
#[derive(Default)]
struct GateState {
    /// Lines sent to the controller and not yet fully handled.
    backlog: usize,
    /// Lines the controller holds back until the running search ends.
    deferred: usize,
    /// The running search, if any, with its flag that says it has written
    /// its `bestmove` (from then on the search is over for the protocol).
    search: Option<(SearchControl, Arc<Answer>)>,
}

/// Shared between the reader and the controller; see the module
/// documentation of `protocol` for the rules it enforces.
#[derive(Default)]
pub(crate) struct Gate {
    state: Mutex<GateState>,
    /// Set once `quit` or the end of input has been read.
    ending: Arc<AtomicBool>,
}

impl Gate {
    fn lock(&self) -> MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Answers `isready` at once while a search runs; `stop` and
    /// `ponderhit` too, when every line sent earlier has been handled (an
    /// earlier `go` may not have started its search yet). Sends everything
    /// else to the controller, and `ponderhit` as well: the controller
    /// sets the deadline by which it answers for a search that cannot get
    /// a processor, counted from the `ponderhit`.
    fn route(&self, command: Command, read_at: Instant, output: &Output, events: &Sender<Event>) {
        let mut state = self.lock();
        if let Some((search, answered)) = &state.search
            && !answered.given()
        {
            // A line held back behind the search may be a `go` that this
            // `stop` is meant for: then the controller must see it in turn.
            let in_order = state.backlog == 0 && state.deferred == 0;
            match command {
                Command::IsReady => return output.line("readyok"),
                Command::Stop if in_order => return search.stop.store(true, Ordering::SeqCst),
                Command::PonderHit if in_order => search.pondering.store(false, Ordering::SeqCst),
                _ => {}
            }
        }
        Self::send(
            &mut state,
            Line {
                command: Ok(command),
                read_at,
            },
            events,
        );
    }

    /// Sends an error line to the controller, which reports it in turn.
    fn refuse(&self, message: String, read_at: Instant, events: &Sender<Event>) {
        let line = Line {
            command: Err(message),
            read_at,
        };
        Self::send(&mut self.lock(), line, events);
    }

    fn send(state: &mut GateState, line: Line, events: &Sender<Event>) {
        // The count is raised under the lock, before the controller can see
        // the line, so the controller's decrement never comes first.
        state.backlog += 1;
        if events.send(Event::Line(line)).is_err() {
            state.backlog -= 1;
        }
    }

    /// The flag set once `quit` or the end of input has been read, which
    /// work that is not a search (a perft) watches to end early.
    pub(crate) fn ending(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.ending)
    }

    /// Stops the running search and any perft at once (for `quit` and end
    /// of input).
    fn stop_for_quit(&self) {
        self.ending.store(true, Ordering::SeqCst);
        if let Some((search, _)) = &self.lock().search {
            search.stop.store(true, Ordering::SeqCst);
        }
    }

    /// The controller has handled an event (`line_handled`: one that the
    /// reader sent) and publishes its running search (with its answered
    /// flag) and how many lines it holds back. One lock, so the reader never
    /// sees the count drop before the new search is visible.
    pub(crate) fn publish(
        &self,
        line_handled: bool,
        search: Option<(&SearchControl, &Arc<Answer>)>,
        deferred: usize,
    ) {
        let mut state = self.lock();
        if line_handled {
            state.backlog = state.backlog.saturating_sub(1);
        }
        state.search = search.map(|(control, answered)| (control.clone(), Arc::clone(answered)));
        state.deferred = deferred;
    }
}

/// The length of one input line as read, end-of-line excluded.
enum LineRead {
    /// The whole line is in the buffer.
    Complete,
    /// The line had this many bytes; only the start was kept.
    TooLong(usize),
}

/// Reads one line into `line` without ever keeping more than a little over
/// [`MAX_LINE_BYTES`]; the rest of a longer line is skipped. `None` at the
/// end of input.
fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<Option<LineRead>> {
    // Room for the limit, a carriage return, and one byte to detect excess.
    let keep = MAX_LINE_BYTES + 2;
    line.clear();
    let mut length = 0usize;
    let mut started = false;
    loop {
        let chunk = match input.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            if !started {
                return Ok(None);
            }
            break;
        }
        started = true;
        let newline = chunk.iter().position(|&b| b == b'\n');
        let part = &chunk[..newline.unwrap_or(chunk.len())];
        let room = keep.saturating_sub(line.len());
        line.extend_from_slice(&part[..part.len().min(room)]);
        length += part.len();
        let used = part.len() + usize::from(newline.is_some());
        input.consume(used);
        if newline.is_some() {
            break;
        }
    }
    Ok(Some(if length > line.len() {
        LineRead::TooLong(length)
    } else {
        LineRead::Complete
    }))
}

/// Turns one raw line into a command, nothing (blank line) or an error text.
fn interpret(line: &[u8], read: LineRead) -> Result<Option<Command>, String> {
    if let LineRead::TooLong(len) = read {
        return Err(CommandError::LineTooLong { len }.to_string());
    }
    let text = std::str::from_utf8(line).map_err(|e| {
        format!(
            "line is not valid UTF-8 (bad byte at offset {})",
            e.valid_up_to()
        )
    })?;
    parse_command(text).map_err(|e| e.to_string())
}

/// The reader: reads `input` to its end or to `quit`, answering or
/// forwarding each line, then stops any search and sends the final `quit`.
pub(crate) fn read_commands(
    input: impl BufRead,
    gate: &Gate,
    output: &Output,
    events: &Sender<Event>,
) {
    let mut input = input;
    let mut line = Vec::new();
    loop {
        let read = match read_line(&mut input, &mut line) {
            Ok(Some(read)) => read,
            Ok(None) => break,
            Err(e) => {
                log::error!("cannot read input: {e}");
                break;
            }
        };
        let read_at = Instant::now();
        match interpret(&line, read) {
            Ok(None) => {}
            Ok(Some(Command::Quit)) => break,
            Ok(Some(command)) => gate.route(command, read_at, output, events),
            Err(message) => gate.refuse(message, read_at, events),
        }
    }
    gate.stop_for_quit();
    gate.route(Command::Quit, Instant::now(), output, events);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn lines_of(bytes: &[u8]) -> Vec<Result<Option<Command>, String>> {
        let mut input = Cursor::new(bytes.to_vec());
        let mut line = Vec::new();
        let mut out = Vec::new();
        while let Some(read) = read_line(&mut input, &mut line).unwrap() {
            out.push(interpret(&line, read));
        }
        out
    }

    /// The reader ends the ponder at once, and the controller still hears
    /// of it: the deadline of its answer runs from the `ponderhit`.
    #[test]
    fn a_ponderhit_answered_by_the_reader_reaches_the_controller_too() {
        let gate = Gate::default();
        let control = SearchControl::default();
        control.pondering.store(true, Ordering::SeqCst);
        gate.publish(false, Some((&control, &Arc::new(Answer::default()))), 0);
        let output = Output::new(io::sink()).unwrap();
        let (events, received) = std::sync::mpsc::channel();
        let read_at = Instant::now();
        gate.route(Command::PonderHit, read_at, &output, &events);
        assert!(!control.pondering.load(Ordering::SeqCst));
        match received.try_recv() {
            Ok(Event::Line(line)) => {
                assert!(matches!(line.command, Ok(Command::PonderHit)));
                assert_eq!(line.read_at, read_at);
            }
            _ => panic!("the controller was not told of the ponderhit"),
        }
    }

    #[test]
    fn splits_lines_and_accepts_a_last_line_without_newline() {
        let lines = lines_of(b"uci\r\n\nisready\nstop");
        assert_eq!(
            lines,
            vec![
                Ok(Some(Command::Uci)),
                Ok(None),
                Ok(Some(Command::IsReady)),
                Ok(Some(Command::Stop)),
            ]
        );
        assert!(lines_of(b"").is_empty());
    }

    #[test]
    fn refuses_invalid_utf8_and_keeps_reading() {
        let lines = lines_of(b"is\xffready\nisready\n");
        assert_eq!(
            lines[0],
            Err("line is not valid UTF-8 (bad byte at offset 2)".to_string())
        );
        assert_eq!(lines[1], Ok(Some(Command::IsReady)));
    }

    #[test]
    fn refuses_overlong_lines_without_keeping_them() {
        let mut bytes = vec![b'x'; 3 * MAX_LINE_BYTES];
        bytes.extend_from_slice(b"\nisready\n");
        let mut input = Cursor::new(bytes);
        let mut line = Vec::new();
        let read = read_line(&mut input, &mut line).unwrap().unwrap();
        assert!(line.len() <= MAX_LINE_BYTES + 2);
        let message = interpret(&line, read).unwrap_err();
        assert!(
            message.starts_with(&format!("line too long ({} bytes", 3 * MAX_LINE_BYTES)),
            "{message}"
        );
        let read = read_line(&mut input, &mut line).unwrap().unwrap();
        assert_eq!(interpret(&line, read), Ok(Some(Command::IsReady)));
    }

    #[test]
    fn a_line_at_the_limit_is_accepted() {
        let mut bytes = b"go".to_vec();
        bytes.resize(MAX_LINE_BYTES, b' ');
        bytes.extend_from_slice(b"\r\n");
        let lines = lines_of(&bytes);
        assert!(
            matches!(lines[0], Ok(Some(Command::Go(_)))),
            "{:?}",
            lines[0]
        );
        bytes.insert(0, b' ');
        let lines = lines_of(&bytes);
        assert!(lines[0].as_ref().unwrap_err().starts_with("line too long"));
    }
}
