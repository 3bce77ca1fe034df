//! Newline-delimited streams on blocking file descriptors, for the proxy's relay: lines are read
//! a whole `read` at a time and written a batch at a time, so that a flood of messages costs a
//! few system calls per batch rather than per message.

use std::io::{self, Read, Write};
use std::sync::Mutex;

/// How much one `read` asks for.
const READ_SIZE: usize = 64 * 1024;

/// Where lines go: one side's input. Lines are queued with [`Sink::push`] and go out, in the
/// order they were queued, at the next [`Sink::flush`], whichever thread calls it; a write
/// blocks the caller until the other side has taken it (back-pressure).
pub struct Sink {
    state: Mutex<SinkState>,
}

struct SinkState {
    /// `None` once closed or after a failed write.
    to: Option<Box<dyn Write + Send>>,
    queued: Vec<u8>,
}

impl Sink {
    pub fn new(to: impl Write + Send + 'static) -> Sink {
        Sink {
            state: Mutex::new(SinkState {
                to: Some(Box::new(to)),
                queued: Vec::new(),
            }),
        }
    }

    /// Queues `line` (without its newline).
    pub fn push(&self, line: &[u8]) {
        let mut state = self.lock();
        state.queued.extend_from_slice(line);
        state.queued.push(b'\n');
    }

    /// Writes what is queued; an error once the sink is closed or the other side has gone.
    pub fn flush(&self) -> io::Result<()> {
        let mut state = self.lock();
        let SinkState { to, queued } = &mut *state;
        let Some(writer) = to else {
            queued.clear();
            return Err(io::ErrorKind::BrokenPipe.into());
        };
        if queued.is_empty() {
            return Ok(());
        }
        let written = writer.write_all(queued).and_then(|()| writer.flush());
        queued.clear();
        if written.is_err() {
            *to = None;
        }
        written
    }

    /// Queues `line` and writes it with whatever was queued before it.
    pub fn send(&self, line: &str) -> io::Result<()> {
        self.push(line.as_bytes());
        self.flush()
    }

    /// Writes what is queued, then closes the other side's input (it reads its end).
    pub fn close(&self) {
        let _ = self.flush();
        self.lock().to = None;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SinkState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Reads `from` to its end and calls `each` on every line (without `\n` or `\r\n`); `each`
/// returns whether `to` is to get the line. `to` is flushed after each read's lines, not per
/// line. Stops early when `to` can no longer be written. A last line without a newline counts.
pub fn relay_lines(mut from: impl Read, to: &Sink, mut each: impl FnMut(&[u8]) -> bool) {
    let mut buffer = vec![0; READ_SIZE];
    // Bytes of an unfinished line at the start of `buffer`.
    let mut kept = 0;
    loop {
        if kept == buffer.len() {
            buffer.resize(buffer.len() * 2, 0);
        }
        let read = match from.read(&mut buffer[kept..]) {
            Ok(0) | Err(_) => 0,
            Ok(n) => n,
        };
        let end = kept + read;
        let mut start = 0;
        let mut scanned = kept;
        while let Some(at) = memchr::memchr(b'\n', &buffer[scanned..end]) {
            let line = &buffer[start..scanned + at];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if each(line) {
                to.push(line);
            }
            start = scanned + at + 1;
            scanned = start;
        }
        if read == 0 {
            if start < end && each(&buffer[start..end]) {
                to.push(&buffer[start..end]);
            }
            let _ = to.flush();
            return;
        }
        if to.flush().is_err() {
            return;
        }
        buffer.copy_within(start..end, 0);
        kept = end - start;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A writer whose bytes can be read afterwards.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Reads one byte at a time, so that lines arrive split across reads.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
            let Some((&first, rest)) = self.0.split_first() else {
                return Ok(0);
            };
            buffer[0] = first;
            self.0 = rest;
            Ok(1)
        }
    }

    #[test]
    fn lines_are_relayed_whole_in_order_and_filtered() {
        let long = "x".repeat(3 * READ_SIZE);
        let input = format!("one\r\ntwo\nskip\n{long}\nlast");
        for trickle in [false, true] {
            let out = Shared::default();
            let sink = Sink::new(out.clone());
            let mut seen = Vec::new();
            let each = |line: &[u8]| {
                seen.push(String::from_utf8(line.to_vec()).unwrap());
                line != b"skip"
            };
            if trickle {
                relay_lines(Trickle(input.as_bytes()), &sink, each);
            } else {
                relay_lines(input.as_bytes(), &sink, each);
            }
            assert_eq!(seen, ["one", "two", "skip", long.as_str(), "last"]);
            let written = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
            assert_eq!(written, format!("one\ntwo\n{long}\nlast\n"));
        }
    }

    #[test]
    fn a_closed_sink_takes_nothing() {
        let out = Shared::default();
        let sink = Sink::new(out.clone());
        sink.send("before").unwrap();
        sink.close();
        assert!(sink.send("after").is_err());
        assert_eq!(out.0.lock().unwrap().as_slice(), b"before\n");
    }
}
