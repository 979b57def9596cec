//! Line and column of byte offsets in a text: [`line_col`] for one lookup,
//! [`LineIndex`] for many. Used for every source position shown to a user
//! (diagnostics of the front end, assembler messages of plugins).

/// Converts a byte offset into a 1-based (line, column) pair; the column
/// counts characters. For many lookups in one text, build a [`LineIndex`].
pub fn line_col(source: &str, offset: u32) -> (usize, usize) {
    LineIndex::new(source).line_col(source, offset)
}

/// Where every line of a text starts, for repeated offset → line lookups.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineIndex {
    /// Byte offset of the start of every line.
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        LineIndex {
            starts: std::iter::once(0)
                .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                .collect(),
        }
    }

    /// The 1-based (line, column) of byte `offset` of `text` (the text
    /// the index was built from), as [`line_col`]: offsets past the end
    /// are the end, the column counts characters.
    pub fn line_col(&self, text: &str, offset: u32) -> (usize, usize) {
        let offset = floor_char_boundary(text, (offset as usize).min(text.len()));
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let start = self.starts[line - 1];
        (line, text[start..offset].chars().count() + 1)
    }

    /// The text of 1-based `line` without its line break (empty past the
    /// last line).
    pub fn line<'t>(&self, text: &'t str, line: usize) -> &'t str {
        let Some(&start) = line.checked_sub(1).and_then(|i| self.starts.get(i)) else {
            return "";
        };
        let end = self.starts.get(line).map_or(text.len(), |&e| e - 1);
        text.get(start..end).unwrap_or("").trim_end_matches('\r')
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::{LineIndex, line_col};

    #[test]
    fn offsets_map_to_lines_columns_and_line_texts() {
        let text = "ab\r\n  c\u{e9} d\n\nlast";
        let index = LineIndex::new(text);
        for (offset, want) in [
            (0, (1, 1)),
            (1, (1, 2)),
            (4, (2, 1)),
            // `d` follows the two-byte `é`: column 6.
            (10, (2, 6)),
            // Inside `é`: its start.
            (8, (2, 4)),
            (11, (2, 7)),
            (12, (3, 1)),
            (13, (4, 1)),
            (17, (4, 5)),
            (99, (4, 5)),
        ] {
            assert_eq!(index.line_col(text, offset), want, "offset {offset}");
            assert_eq!(line_col(text, offset), want, "offset {offset}");
        }
        assert_eq!(index.line(text, 1), "ab");
        assert_eq!(index.line(text, 2), "  c\u{e9} d");
        assert_eq!(index.line(text, 3), "");
        assert_eq!(index.line(text, 4), "last");
        assert_eq!(index.line(text, 0), "");
        assert_eq!(index.line(text, 5), "");
    }
}
