//! The physical line where a CSV record starts, counted from the bytes read.
//!
//! The `csv` crate's `Position::line` is one short after every CRLF terminator and after blank
//! lines (rust-csv issues 395 and 208 on GitHub, open as of csv 1.3): a file saved on Windows
//! would have its bad rows reported a line early, and more so the further down they are.
//! [`LineCounter`] sits under the `csv::Reader`, notes where each `\n` is as the bytes go by, and
//! turns a record's byte offset (`Position::byte`, which is right) into its line.

use std::collections::VecDeque;
use std::io::{self, Read};

/// A reader that remembers the offsets of the `\n` bytes it has handed out but that no record
/// has passed yet (at most a buffer's worth: the memory stays bounded whatever the file).
#[derive(Debug)]
pub(crate) struct LineCounter<R> {
    inside: R,
    read_count: u64,
    /// Each `\n` not passed yet, and whether it ends an empty line (nothing, or a lone `\r`).
    breaks: VecDeque<(u64, bool)>,
    passes: u64,
    /// The offset of the last `\n` read (`None` before the first) and the byte read last.
    last_break: Option<u64>,
    last_byte: u8,
}

impl<R> LineCounter<R> {
    pub(crate) fn new(inside: R) -> Self {
        LineCounter {
            inside,
            read_count: 0,
            breaks: VecDeque::new(),
            passes: 0,
            last_break: None,
            last_byte: 0,
        }
    }

    /// The 1-based line of the record whose `Position::byte` is `byte`; offsets must come in
    /// file order (they do: records are read in order).
    ///
    /// After a CRLF or blank lines, `csv` gives as a record's start a `\n` before it: the `\n`
    /// at `byte` and the empty lines that follow it count as before the record (`csv` skips
    /// empty lines, so a record never starts on one).
    pub(crate) fn line_of(&mut self, byte: u64) -> u64 {
        while let Some(&(q, empty)) = self.breaks.front() {
            if q > byte && !empty {
                break;
            }
            self.breaks.pop_front();
            self.passes += 1;
        }
        self.passes + 1
    }
}

impl<R: Read> Read for LineCounter<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inside.read(buf)?;
        let chunk = &buf[..n];
        for i in memchr::memchr_iter(b'\n', chunk) {
            let q = self.read_count + i as u64;
            let line_start = self.last_break.map_or(0, |p| p + 1);
            let antes = match i {
                0 => self.last_byte,
                _ => chunk[i - 1],
            };
            let empty = q == line_start || (q == line_start + 1 && antes == b'\r');
            self.breaks.push_back((q, empty));
            self.last_break = Some(q);
        }
        if let Some(&b) = chunk.last() {
            self.last_byte = b;
        }
        self.read_count += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::LineCounter;

    /// Hands out one byte per read, so that a CRLF is split between reads.
    struct Trickle<'a>(&'a [u8]);

    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.len().min(buf.len()).min(1);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    /// Each record's first field says its physical line; every record must read back as such.
    fn lines_read(text: &str, in_pieces: bool) -> Vec<(u64, u64)> {
        let source: Box<dyn std::io::Read + '_> = if in_pieces {
            Box::new(Trickle(text.as_bytes()))
        } else {
            Box::new(text.as_bytes())
        };
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(LineCounter::new(source));
        let mut r = csv::StringRecord::new();
        let mut parsed = Vec::new();
        while reader.read_record(&mut r).unwrap() {
            let byte = r.position().unwrap().byte();
            let line = reader.get_mut().line_of(byte);
            parsed.push((r[0].trim().parse().unwrap(), line));
        }
        parsed
    }

    #[test]
    fn lines_are_right_with_lf_crlf_blank_lines_and_quoted_newlines() {
        for text in [
            "1,a\n2,b\n3,c\n",
            "1,a\r\n2,b\r\n3,c\r\n",
            "1,a\r\n2,b\r\n3,c",
            "1,a\n\n3,b\n\n\n6,c\n",
            "1,a\r\n\r\n3,b\r\n\r\n\r\n6,c\r\n",
            "1,\"x\ny\"\n3,b\r\n4,\"p\r\nq\r\nr\"\r\n7,c\n",
            "\n\n3,a\n4,b",
            "1,\"x\n\ny\"\n4,b\r\n\r\n6,\"\r\n\r\n\"\r\n9,c",
        ] {
            for in_pieces in [false, true] {
                let parsed = lines_read(text, in_pieces);
                assert!(!parsed.is_empty());
                for (expected, got_one) in parsed {
                    assert_eq!(got_one, expected, "{text:?}, aos poucos: {in_pieces}");
                }
            }
        }
    }

    #[test]
    fn the_csv_crate_alone_is_a_line_short_after_crlf() {
        // What this module is for: if `csv` fixes its count, this test says so.
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader("1,a\r\n2,b\r\n3,c\r\n".as_bytes());
        let lines: Vec<u64> = reader
            .records()
            .map(|r| r.unwrap().position().unwrap().line())
            .collect();
        assert_eq!(lines, [1, 1, 2]);
    }
}
