//! Reading PGN files in the form `agon match -pgnout` writes them: tag
//! pairs, numbered moves each followed by a `{score/depth time}` comment, a
//! closing `{reason}` comment and the result. Every move is checked by the
//! rules core.

use crate::rules::{Color, Game, parse_fen};

/// A score as recorded, from White's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WhiteScore {
    /// Hundredths of a guard, positive when White stands better.
    Cp(i32),
    /// A forced end in this many moves, positive when White wins.
    Mate(i32),
}

impl WhiteScore {
    /// Turns a score from the mover's side into White's.
    pub fn from_mover(mover: Color, cp: Option<i32>, mate: Option<i32>) -> Option<WhiteScore> {
        let sign = if mover == Color::White { 1 } else { -1 };
        match (cp, mate) {
            (_, Some(mate)) => Some(WhiteScore::Mate(sign * mate)),
            (Some(cp), None) => Some(WhiteScore::Cp(sign * cp)),
            _ => None,
        }
    }

    /// Back to the mover's side: (cp, mate).
    pub fn for_mover(self, mover: Color) -> (Option<i32>, Option<i32>) {
        let sign = if mover == Color::White { 1 } else { -1 };
        match self {
            WhiteScore::Cp(cp) => (Some(sign * cp), None),
            WhiteScore::Mate(mate) => (None, Some(sign * mate)),
        }
    }
}

/// One move of a read game with its comment.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadMove {
    /// `<from><to>`.
    pub text: String,
    /// The recorded score, from White's side.
    pub score: Option<WhiteScore>,
    /// The recorded depth.
    pub depth: Option<u32>,
    /// The recorded thinking time.
    pub time_ms: Option<u64>,
    /// A `{book}` move.
    pub book: bool,
}

/// One game of a PGN file.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadGame {
    /// The tag pairs in file order.
    pub tags: Vec<(String, String)>,
    /// The start position.
    pub fen: String,
    /// The moves, all legal.
    pub moves: Vec<ReadMove>,
    /// The closing comment (why the game ended), if any.
    pub reason: Option<String>,
    /// `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub result: String,
}

impl ReadGame {
    /// The value of a tag.
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Reads every game of a PGN text; an error names the game and what is wrong.
pub fn read_games(text: &str) -> Result<Vec<ReadGame>, String> {
    let mut games = Vec::new();
    let mut tags: Vec<(String, String)> = Vec::new();
    let mut movetext = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') && !in_comment(&movetext) {
            if !movetext.trim().is_empty() {
                games.push(finish(&tags, &movetext, games.len() + 1)?);
                tags.clear();
                movetext.clear();
            }
            tags.push(
                parse_tag(trimmed)
                    .ok_or_else(|| format!("game {}: bad tag line '{trimmed}'", games.len() + 1))?,
            );
        } else {
            movetext.push_str(line);
            movetext.push('\n');
        }
    }
    if !tags.is_empty() || !movetext.trim().is_empty() {
        games.push(finish(&tags, &movetext, games.len() + 1)?);
    }
    if games.is_empty() {
        return Err("no game in the PGN text".into());
    }
    Ok(games)
}

fn in_comment(text: &str) -> bool {
    text.matches('{').count() > text.matches('}').count()
}

fn parse_tag(line: &str) -> Option<(String, String)> {
    let inner = line.strip_prefix('[')?.strip_suffix(']')?;
    let (name, rest) = inner.split_once(char::is_whitespace)?;
    let quoted = rest.trim().strip_prefix('"')?.strip_suffix('"')?;
    let value = quoted.replace("\\\"", "\"").replace("\\\\", "\\");
    Some((name.to_string(), value))
}

enum Token {
    Word(String),
    Comment(String),
}

fn tokens(movetext: &str, number: usize) -> Result<Vec<Token>, String> {
    let mut tokens = Vec::new();
    let mut rest = movetext;
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            return Ok(tokens);
        }
        if let Some(after) = rest.strip_prefix('{') {
            let end = after
                .find('}')
                .ok_or_else(|| format!("game {number}: a comment is not closed"))?;
            tokens.push(Token::Comment(after[..end].trim().to_string()));
            rest = &after[end + 1..];
        } else {
            let end = rest
                .find(|c: char| c.is_whitespace() || c == '{')
                .unwrap_or(rest.len());
            tokens.push(Token::Word(rest[..end].to_string()));
            rest = &rest[end..];
        }
    }
}

fn finish(tags: &[(String, String)], movetext: &str, number: usize) -> Result<ReadGame, String> {
    let fen = tags
        .iter()
        .find(|(n, _)| n == "FEN")
        .map_or(crate::rules::START_FEN.to_string(), |(_, v)| v.clone());
    let start = parse_fen(&fen).map_err(|e| format!("game {number}: bad FEN tag: {e}"))?;
    let mut game = Game::new(start);
    let mut moves: Vec<ReadMove> = Vec::new();
    let mut reason = None;
    let mut result = tags
        .iter()
        .find(|(n, _)| n == "Result")
        .map_or("*".to_string(), |(_, v)| v.clone());
    let mut last_was_move = false;
    for token in tokens(movetext, number)? {
        match token {
            Token::Comment(text) => {
                match moves.last_mut() {
                    Some(last) if last_was_move => read_comment(last, &text),
                    _ => reason = Some(text),
                }
                last_was_move = false;
            }
            Token::Word(word) => {
                last_was_move = false;
                if matches!(word.as_str(), "1-0" | "0-1" | "1/2-1/2" | "*") {
                    result = word;
                    continue;
                }
                let bare = word.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
                if bare.is_empty() {
                    continue;
                }
                let mover = game.position().side_to_move();
                game.play_text(bare).map_err(|e| {
                    format!(
                        "game {number}: move {} '{bare}' ({}) is illegal: {e}",
                        moves.len() + 1,
                        mover.name()
                    )
                })?;
                moves.push(ReadMove {
                    text: bare.to_string(),
                    score: None,
                    depth: None,
                    time_ms: None,
                    book: false,
                });
                last_was_move = true;
            }
        }
    }
    // Scores in the records are from the mover's side; keep White's.
    let mut position = start;
    for (index, read) in moves.iter_mut().enumerate() {
        let mover = position.side_to_move();
        if let Some(score) = read.score {
            read.score = Some(match score {
                WhiteScore::Cp(cp) => WhiteScore::from_mover(mover, Some(cp), None),
                WhiteScore::Mate(m) => WhiteScore::from_mover(mover, None, Some(m)),
            })
            .flatten();
        }
        position = position.make_move(game.moves()[index]);
    }
    Ok(ReadGame {
        tags: tags.to_vec(),
        fen,
        moves,
        reason,
        result,
    })
}

/// Reads `+0.35/8 0.120s`, `+M3/5 0.010s`, `?` or `book` into the move (score still the mover's).
fn read_comment(mv: &mut ReadMove, text: &str) {
    if text == "book" {
        mv.book = true;
        return;
    }
    let mut parts = text.split_whitespace();
    if let Some(first) = parts.next() {
        let (score, depth) = first.split_once('/').unwrap_or((first, ""));
        mv.depth = depth.parse().ok();
        mv.score = if let Some(mate) = score.strip_prefix("+M") {
            mate.parse().ok().map(WhiteScore::Mate)
        } else if let Some(mate) = score.strip_prefix("-M") {
            mate.parse::<i32>().ok().map(|m| WhiteScore::Mate(-m))
        } else {
            score
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && v.abs() < 1e6)
                .map(|v| WhiteScore::Cp((v * 100.0).round() as i32))
        };
    }
    if let Some(time) = parts.next().and_then(|t| t.strip_suffix('s')) {
        mv.time_ms = time
            .parse::<f64>()
            .ok()
            .filter(|t| t.is_finite() && *t >= 0.0 && *t < 1e9)
            .map(|t| (t * 1000.0).round() as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_GAMES: &str = "[Event \"agon match\"]\n[White \"a\"]\n[Black \"b\"]\n[Result \"1/2-1/2\"]\n\
[FEN \"q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q w 1\"]\n\n1. f1e1 {+0.35/8 0.120s} f11g11 {-M3/2 0.010s}\n\
2. e1f1 {book} {draw by repetition} 1/2-1/2\n\n[Event \"x\"]\n[Result \"*\"]\n\n1. f1f2 {?} *\n";

    #[test]
    fn games_scores_and_reasons_are_read() {
        let games = read_games(TWO_GAMES).unwrap();
        assert_eq!(games.len(), 2);
        let first = &games[0];
        assert_eq!(first.tag("White"), Some("a"));
        assert_eq!(first.moves.len(), 3);
        assert_eq!(first.moves[0].score, Some(WhiteScore::Cp(35)));
        assert_eq!(first.moves[0].depth, Some(8));
        assert_eq!(first.moves[0].time_ms, Some(120));
        // Black's -M3 means White wins.
        assert_eq!(first.moves[1].score, Some(WhiteScore::Mate(3)));
        assert!(first.moves[2].book);
        assert_eq!(first.reason.as_deref(), Some("draw by repetition"));
        assert_eq!(first.result, "1/2-1/2");
        assert_eq!(games[1].moves[0].score, None);
    }

    #[test]
    fn an_illegal_move_is_named() {
        let error = read_games("[Event \"x\"]\n\n1. f1f3 *\n").unwrap_err();
        assert!(error.contains("move 1 'f1f3'"), "{error}");
        assert!(read_games("").is_err());
        assert!(read_games("[Event \"x\"]\n\n1. f1f2 {open\n").is_err());
    }
}
