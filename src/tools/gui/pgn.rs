//! Reading PGN files in the form `agon match -pgnout` writes them: tag
//! pairs, numbered moves each followed by a `{score/depth time}` comment, a
//! closing `{reason}` comment and the result; also variations in
//! parentheses (RAV) and comments in words. Every move is checked by the
//! rules core.

use super::problem::{Code, Problem, fen_reason};
use crate::rules::{Color, Game, GameResult, parse_fen};

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
        match (cp, mate) {
            (_, Some(mate)) => Some(WhiteScore::Mate(as_seen_by(mover, mate))),
            (Some(cp), None) => Some(WhiteScore::Cp(as_seen_by(mover, cp))),
            _ => None,
        }
    }

    /// Back to the mover's side: (cp, mate).
    pub fn for_mover(self, mover: Color) -> (Option<i32>, Option<i32>) {
        match self {
            WhiteScore::Cp(cp) => (Some(as_seen_by(mover, cp)), None),
            WhiteScore::Mate(mate) => (None, Some(as_seen_by(mover, mate))),
        }
    }
}

/// A score of one side as `side` sees it, and back: the same for White,
/// negated for Black (saturating: an engine may send `i32::MIN`).
fn as_seen_by(side: Color, score: i32) -> i32 {
    if side == Color::White {
        score
    } else {
        score.saturating_neg()
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
    /// A comment in words after it (not a score).
    pub comment: Option<String>,
    /// Moves that could have been played instead, each a line (RAV).
    pub variations: Vec<Vec<ReadMove>>,
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
pub fn read_games(text: &str) -> Result<Vec<ReadGame>, Problem> {
    let mut games = Vec::new();
    let mut tags: Vec<(String, String)> = Vec::new();
    let mut movetext = String::new();
    // Braces opened and not closed in `movetext`, kept as lines come so that
    // a long text is not counted again for every line.
    let mut open_braces: i64 = 0;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') && open_braces <= 0 {
            if !movetext.trim().is_empty() {
                games.push(finish(&tags, &movetext, games.len() + 1)?);
                tags.clear();
                movetext.clear();
                open_braces = 0;
            }
            let game = games.len() + 1;
            tags.push(parse_tag(trimmed).ok_or_else(|| {
                Problem::new(
                    Code::PgnBadTag,
                    format!("game {game}: bad tag line '{trimmed}'"),
                )
                .with("game", game)
                .with("line", trimmed)
            })?);
        } else {
            open_braces += brace_balance(line);
            movetext.push_str(line);
            movetext.push('\n');
        }
    }
    if !tags.is_empty() || !movetext.trim().is_empty() {
        games.push(finish(&tags, &movetext, games.len() + 1)?);
    }
    if games.is_empty() {
        return Err(Problem::new(Code::PgnEmpty, "no game in the PGN text"));
    }
    Ok(games)
}

/// A fault of game `number` of the text.
fn in_game(code: Code, number: usize, what: &str) -> Problem {
    Problem::new(code, format!("game {number}: {what}")).with("game", number)
}

/// Braces `line` opens less those it closes.
fn brace_balance(line: &str) -> i64 {
    line.chars()
        .map(|c| match c {
            '{' => 1,
            '}' => -1,
            _ => 0,
        })
        .sum()
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
    Open,
    Close,
}

fn tokens(movetext: &str, number: usize) -> Result<Vec<Token>, Problem> {
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
                .ok_or_else(|| in_game(Code::PgnOpenComment, number, "a comment is not closed"))?;
            tokens.push(Token::Comment(after[..end].trim().to_string()));
            rest = &after[end + 1..];
        } else if let Some(after) = rest.strip_prefix('(') {
            tokens.push(Token::Open);
            rest = after;
        } else if let Some(after) = rest.strip_prefix(')') {
            tokens.push(Token::Close);
            rest = after;
        } else {
            let end = rest
                .find(|c: char| c.is_whitespace() || matches!(c, '{' | '(' | ')'))
                .unwrap_or(rest.len());
            tokens.push(Token::Word(rest[..end].to_string()));
            rest = &rest[end..];
        }
    }
}

fn finish(tags: &[(String, String)], movetext: &str, number: usize) -> Result<ReadGame, Problem> {
    let fen = tags
        .iter()
        .find(|(n, _)| n == "FEN")
        .map_or(crate::rules::START_FEN.to_string(), |(_, v)| v.clone());
    let start = parse_fen(&fen).map_err(|e| {
        in_game(Code::PgnBadFen, number, &format!("bad FEN tag: {e}"))
            .within("reason", &fen_reason(&e))
    })?;
    let mut reader = LineReader {
        tokens: tokens(movetext, number)?.into_iter().peekable(),
        number,
        reason: None,
        result: tags
            .iter()
            .find(|(n, _)| n == "Result")
            .map_or("*".to_string(), |(_, v)| v.clone()),
    };
    let moves = reader.line(Game::new(start), 0)?;
    if reader.tokens.next().is_some() {
        return Err(in_game(
            Code::PgnStrayClose,
            number,
            "a ')' closes no variation",
        ));
    }
    Ok(ReadGame {
        tags: tags.to_vec(),
        fen,
        moves,
        reason: reader.reason,
        result: reader.result,
    })
}

/// The deepest nesting of variations read: each level is a call of
/// [`LineReader::line`], and a file of 100,000 `(` must not overflow the
/// stack. Real annotation seldom nests beyond a handful.
const MAX_VARIATION_DEPTH: usize = 64;

/// Reads the movetext of one game, a line and its variations at a time.
struct LineReader {
    tokens: std::iter::Peekable<std::vec::IntoIter<Token>>,
    number: usize,
    reason: Option<String>,
    result: String,
}

impl LineReader {
    /// Whether only the result (or nothing) follows.
    fn closing(&mut self) -> bool {
        match self.tokens.peek() {
            None => true,
            Some(Token::Word(word)) => is_result(word),
            Some(_) => false,
        }
    }

    /// Reads moves from `game` up to the end of the line (`)` or the end of
    /// the text); `depth` counts the variations it is in.
    fn line(&mut self, mut game: Game, depth: usize) -> Result<Vec<ReadMove>, Problem> {
        let number = self.number;
        let mut moves: Vec<ReadMove> = Vec::new();
        // Who played the last move (its comment's scores are that side's).
        let mut last_mover: Option<Color> = None;
        let mut last_was_move = false;
        while let Some(token) = self.tokens.peek() {
            if matches!(token, Token::Close) {
                if depth == 0 {
                    return Ok(moves);
                }
                self.tokens.next();
                return Ok(moves);
            }
            let Some(token) = self.tokens.next() else {
                break;
            };
            match token {
                Token::Close => {}
                Token::Open => {
                    let Some(last) = moves.last_mut() else {
                        return Err(in_game(
                            Code::PgnEarlyVariation,
                            number,
                            "a variation before any move",
                        ));
                    };
                    if depth >= MAX_VARIATION_DEPTH {
                        return Err(in_game(
                            Code::PgnDeepVariation,
                            number,
                            &format!("variations nest deeper than {MAX_VARIATION_DEPTH} levels"),
                        )
                        .with("limit", MAX_VARIATION_DEPTH));
                    }
                    // A variation replaces the last move: it starts before it.
                    let mut from = game.clone();
                    from.take_back();
                    let variation = self.line(from, depth + 1)?;
                    last.variations.push(variation);
                    last_was_move = false;
                }
                Token::Comment(text) => {
                    match moves.last_mut() {
                        Some(last) if last_was_move => {
                            read_comment(last, &text, last_mover.unwrap_or(Color::White));
                        }
                        // The closing comment before the result says why the game ended.
                        _ if depth == 0 && self.closing() => self.reason = Some(text),
                        Some(last) => last.comment = Some(text),
                        None => {}
                    }
                    last_was_move = false;
                }
                Token::Word(word) => {
                    last_was_move = false;
                    if is_result(&word) {
                        if depth == 0 {
                            self.result = word;
                        }
                        continue;
                    }
                    let bare = word.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
                    if bare.is_empty() {
                        continue;
                    }
                    let mover = game.position().side_to_move();
                    // A draw by repetition leaves legal moves on the board.
                    let ended = game.result();
                    if ended != GameResult::Ongoing {
                        return Err(in_game(
                            Code::PgnIllegalMove,
                            number,
                            &format!(
                                "move {} '{bare}' ({}) comes after the end of the game ({})",
                                moves.len() + 1,
                                mover.name(),
                                ended.describe()
                            ),
                        )
                        .with("number", moves.len() + 1)
                        .with("side", mover.name().to_lowercase())
                        .within("reason", &Problem::new(Code::GameOver, "the game is over")));
                    }
                    game.play_text(bare).map_err(|e| {
                        in_game(
                            Code::PgnIllegalMove,
                            number,
                            &format!(
                                "move {} '{bare}' ({}) is illegal: {e}",
                                moves.len() + 1,
                                mover.name()
                            ),
                        )
                        .with("number", moves.len() + 1)
                        .with("side", mover.name().to_lowercase())
                        .within("reason", &Problem::bad_move(bare, &e))
                    })?;
                    last_mover = Some(mover);
                    moves.push(ReadMove {
                        text: bare.to_string(),
                        score: None,
                        depth: None,
                        time_ms: None,
                        book: false,
                        comment: None,
                        variations: Vec::new(),
                    });
                    last_was_move = true;
                }
            }
        }
        if depth > 0 {
            return Err(in_game(
                Code::PgnOpenVariation,
                number,
                "a variation is not closed",
            ));
        }
        Ok(moves)
    }
}

fn is_result(word: &str) -> bool {
    matches!(word, "1-0" | "0-1" | "1/2-1/2" | "*")
}

/// Whether a comment is what the match runner writes after a move: a
/// score (`+0.35/8`, `-M3/2`, `?`) and maybe a time (`0.120s`).
fn is_move_data(text: &str) -> bool {
    let mut parts = text.split_whitespace();
    let score = parts.next().unwrap_or_default();
    let score = score.split_once('/').map_or(score, |(s, _)| s);
    let score_like = score == "?"
        || score.starts_with("+M")
        || score.starts_with("-M")
        || ((score.starts_with('+') || score.starts_with('-'))
            && score[1..].parse::<f64>().is_ok());
    let time_like = parts.next().is_none_or(|t| {
        t.strip_suffix('s')
            .is_some_and(|t| t.parse::<f64>().is_ok())
    });
    score_like && time_like && parts.next().is_none()
}

/// Reads `+0.35/8 0.120s`, `+M3/5 0.010s`, `?` or `book` into the move
/// (the score from the mover's side, kept as White's); other text is a
/// comment in words.
fn read_comment(mv: &mut ReadMove, text: &str, mover: Color) {
    if text == "book" {
        mv.book = true;
        return;
    }
    if !is_move_data(text) {
        mv.comment = Some(text.to_string());
        return;
    }
    let mut parts = text.split_whitespace();
    if let Some(first) = parts.next() {
        let (score, depth) = first.split_once('/').unwrap_or((first, ""));
        mv.depth = depth.parse().ok();
        mv.score = if let Some(mate) = score.strip_prefix("+M") {
            mate.parse().ok().map(WhiteScore::Mate)
        } else if let Some(mate) = score.strip_prefix("-M") {
            mate.parse::<i32>()
                .ok()
                .map(|m| WhiteScore::Mate(m.saturating_neg()))
        } else {
            score
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && v.abs() < 1e6)
                .map(|v| WhiteScore::Cp((v * 100.0).round() as i32))
        }
        .and_then(|mover_score| match mover_score {
            WhiteScore::Cp(cp) => WhiteScore::from_mover(mover, Some(cp), None),
            WhiteScore::Mate(m) => WhiteScore::from_mover(mover, None, Some(m)),
        });
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

    /// A repetition draw leaves legal moves on the board, yet ends the game.
    #[test]
    fn a_move_after_a_draw_by_repetition_is_refused() {
        let shuffle = "1. f1e1 f11g11 2. e1f1 g11f11 3. f1e1 f11g11 4. e1f1 g11f11";
        assert_eq!(
            read_games(&format!("{shuffle} 1/2-1/2\n")).unwrap()[0]
                .moves
                .len(),
            8
        );
        let problem = read_games(&format!("{shuffle} 5. f1e1 1/2-1/2\n")).unwrap_err();
        let json = problem.json().to_string();
        assert!(
            json.contains("move 9 'f1e1' (white) comes after the end of the game (draw by threefold repetition)")
                && json.contains("game-over"),
            "{json}"
        );
    }

    /// A bracket line inside a comment that spans lines is comment text, not
    /// a tag, and a comment closed on a later line lets tags start again.
    #[test]
    fn comments_spanning_lines_hide_tag_lines() {
        let text = "[Event \"one\"]\n\n1. f1e1 {a note\n[not a tag]\nends here} *\n\n[Event \"two\"]\n\n1. f1f2 *\n";
        let games = read_games(text).unwrap();
        assert_eq!(games.len(), 2);
        assert_eq!(
            games[0].moves[0].comment.as_deref(),
            Some("a note\n[not a tag]\nends here")
        );
        assert_eq!(games[1].tag("Event"), Some("two"));
    }

    #[test]
    fn extreme_scores_keep_their_sign() {
        assert_eq!(
            WhiteScore::from_mover(Color::Black, Some(i32::MIN), None),
            Some(WhiteScore::Cp(i32::MAX))
        );
        assert_eq!(
            WhiteScore::Mate(i32::MIN).for_mover(Color::Black),
            (None, Some(i32::MAX))
        );
        let games =
            read_games("[Event \"x\"]\n\n1. f1e1 {+0.10} f11g11 {-M-2147483648} *\n").unwrap();
        // Black mates in (saturated) 2^31 moves: a loss for White.
        assert_eq!(games[0].moves[1].score, Some(WhiteScore::Mate(-i32::MAX)));
    }

    #[test]
    fn variations_and_comments_are_read() {
        let text = "[Event \"x\"]\n\n1. f1e1 {?} {a quiet start} ( 1. f1f2 {?} 1... f11f10 {?} ( 1... f11g11 {?} ) ) \
1... f11g11 {+0.10/3 0.5s} {game in progress} *\n";
        let games = read_games(text).unwrap();
        let moves = &games[0].moves;
        assert_eq!(moves.len(), 2);
        assert_eq!(moves[0].comment.as_deref(), Some("a quiet start"));
        assert_eq!(moves[0].variations.len(), 1);
        let variation = &moves[0].variations[0];
        assert_eq!(variation[0].text, "f1f2");
        assert_eq!(variation[1].text, "f11f10");
        assert_eq!(variation[1].variations[0][0].text, "f11g11");
        // Black's +0.10 is White's -0.10.
        assert_eq!(moves[1].score, Some(WhiteScore::Cp(-10)));
        assert_eq!(games[0].reason.as_deref(), Some("game in progress"));
        assert!(read_games("[Event \"x\"]\n\n1. f1e1 ( 1. f1f2 *\n").is_err());
        assert!(read_games("[Event \"x\"]\n\n1. f1e1 ) *\n").is_err());
    }

    #[test]
    fn variations_nest_up_to_the_limit_and_no_deeper() {
        let nested = |levels: usize| {
            format!(
                "[Event \"x\"]\n\nf1e1 {}{}*\n",
                "( f1e1 ".repeat(levels),
                ") ".repeat(levels)
            )
        };
        assert!(read_games(&nested(MAX_VARIATION_DEPTH)).is_ok());
        let error = read_games(&nested(MAX_VARIATION_DEPTH + 1)).unwrap_err();
        assert_eq!(error.code, Code::PgnDeepVariation);
        // Far deeper than any stack would take, refused the same way.
        let error = read_games(&nested(100_000)).unwrap_err();
        assert_eq!(error.code, Code::PgnDeepVariation);
    }

    #[test]
    fn an_illegal_move_is_named() {
        let error = read_games("[Event \"x\"]\n\n1. f1f3 *\n").unwrap_err();
        assert!(error.message.contains("move 1 'f1f3'"), "{error}");
        assert_eq!(error.code, Code::PgnIllegalMove);
        assert!(read_games("").is_err());
        assert!(read_games("[Event \"x\"]\n\n1. f1f2 {open\n").is_err());
    }
}
