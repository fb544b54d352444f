//! The game record: where it starts, its moves, how it ended, reading and writing PGN.

use super::{Mode, Session, read_start};
use crate::rules::{Color, Game, GameResult, Position, to_fen};
use crate::tools::gui::pgn::{ReadGame, ReadMove, WhiteScore};
use crate::tools::gui::problem::{Code, Problem};
use crate::tools::match_runner::record::{
    Ending, GameRecord, MoveRecord, ScoreRecord, Verdict, move_comment, wrap,
};

/// A game's record, whoever plays it: the start, a tree of moves (the
/// first child of each node continues the main line, the others are
/// sidelines), the line shown through it and the position shown on it.
#[derive(Clone, Debug)]
pub struct Record {
    /// Where the game starts.
    pub start: Position,
    /// Every move ever entered; deleted ones are unlinked, never reused.
    nodes: Vec<Node>,
    /// The first moves: the main one first.
    roots: Vec<usize>,
    /// The line shown: nodes from the first move to the end of the line.
    line: Vec<usize>,
    /// How many plies the position shown is into the line.
    pub cursor: usize,
    /// How the game was stopped, when not by the board alone.
    pub finish: Option<Finish>,
    /// White's and Black's names.
    pub names: [String; 2],
}

/// One move of the tree.
#[derive(Clone, Debug)]
struct Node {
    ply: Ply,
    parent: Option<usize>,
    /// The moves after it: the main one first.
    children: Vec<usize>,
}

/// A played move with what is known about it.
#[derive(Clone, Debug)]
pub struct Ply {
    /// `<from><to>`.
    pub mv: String,
    /// The score of the engine that played it, White's side.
    pub score: Option<WhiteScore>,
    /// Its search depth.
    pub depth: Option<u32>,
    /// Its thinking time.
    pub time_ms: Option<u64>,
    /// An opening book move.
    pub book: bool,
    /// A comment in words (PGN `{...}`).
    pub comment: Option<String>,
}

/// How the game ended, when not by the board alone.
#[derive(Clone, Debug)]
pub struct Finish {
    /// `None` for a draw.
    pub winner: Option<Color>,
    /// The `Termination` tag.
    pub termination: String,
    /// In words.
    pub reason: String,
}

impl Record {
    /// A game from `start` with no move yet.
    pub fn new(start: Position, names: [String; 2]) -> Record {
        Record {
            start,
            nodes: Vec::new(),
            roots: Vec::new(),
            line: Vec::new(),
            cursor: 0,
            finish: None,
            names,
        }
    }

    /// Plies on the line shown.
    pub fn line_len(&self) -> usize {
        self.line.len()
    }

    /// Shows the position after `ply` plies of the line shown.
    pub fn view(&mut self, ply: usize) -> Result<(), Problem> {
        let plies = self.line_len();
        if ply > plies {
            return Err(
                Problem::new(Code::NoPly, format!("no ply {ply}: the line has {plies}"))
                    .with("ply", ply)
                    .with("plies", plies),
            );
        }
        self.cursor = ply;
        Ok(())
    }

    /// The moves of the line shown.
    pub fn plies(&self) -> impl Iterator<Item = &Ply> {
        self.line.iter().map(|&node| &self.nodes[node].ply)
    }

    /// The `index`th move of the line shown.
    pub fn ply(&self, index: usize) -> Option<&Ply> {
        self.line.get(index).map(|&node| &self.nodes[node].ply)
    }

    /// The node of the `index`th move of the line shown.
    pub fn node_at(&self, index: usize) -> Option<usize> {
        self.line.get(index).copied()
    }

    fn children(&self, parent: Option<usize>) -> &Vec<usize> {
        match parent {
            Some(node) => &self.nodes[node].children,
            None => &self.roots,
        }
    }

    fn children_mut(&mut self, parent: Option<usize>) -> &mut Vec<usize> {
        match parent {
            Some(node) => &mut self.nodes[node].children,
            None => &mut self.roots,
        }
    }

    /// The other moves that could have been played instead of the
    /// `index`th of the line shown (its siblings, in order).
    pub fn alternatives(&self, index: usize) -> Vec<usize> {
        let Some(&node) = self.line.get(index) else {
            return Vec::new();
        };
        self.children(self.nodes[node].parent)
            .iter()
            .copied()
            .filter(|&n| n != node)
            .collect()
    }

    /// Whether the `index`th move of the line shown is on the main line.
    pub fn on_main_line(&self, index: usize) -> bool {
        let mut parent = None;
        for &node in self.line.iter().take(index + 1) {
            if self.children(parent).first() != Some(&node) {
                return false;
            }
            parent = Some(node);
        }
        true
    }

    /// The move text of a node.
    pub fn move_of(&self, node: usize) -> Option<&str> {
        self.nodes.get(node).map(|n| n.ply.mv.as_str())
    }

    /// Every move ever entered, deleted ones included.
    pub fn moves_entered(&self) -> usize {
        self.nodes.len()
    }

    /// Plays `ply` after the first `at` plies of the line shown: the same
    /// move already there is followed, another starts a sideline. The line
    /// shown then ends with it.
    pub fn play_at(&mut self, at: usize, ply: Ply) {
        let at = at.min(self.line.len());
        let parent = at.checked_sub(1).map(|i| self.line[i]);
        let existing = self
            .children(parent)
            .iter()
            .copied()
            .find(|&n| self.nodes[n].ply.mv == ply.mv);
        let node = existing.unwrap_or_else(|| {
            self.nodes.push(Node {
                ply,
                parent,
                children: Vec::new(),
            });
            let node = self.nodes.len() - 1;
            self.children_mut(parent).push(node);
            node
        });
        self.line.truncate(at);
        self.line.push(node);
        self.extend_line();
    }

    /// Shows the main line, at the same ply or its end.
    pub fn show_main_line(&mut self) {
        self.line.clear();
        self.extend_line();
        self.cursor = self.cursor.min(self.line.len());
    }

    /// Follows the main continuation to the end of the line shown.
    fn extend_line(&mut self) {
        while let Some(&next) = self.children(self.line.last().copied()).first() {
            self.line.push(next);
        }
    }

    /// Deletes every move after the first `keep` of the line shown.
    pub fn truncate(&mut self, keep: usize) {
        if let Some(&first_gone) = self.line.get(keep) {
            let _ = self.delete(first_gone);
        }
    }

    /// How many moves of the line shown stay when `human` takes back: back
    /// to their previous turn, so that at least one of their moves goes.
    pub fn take_back_point(&self, human: Color) -> Result<usize, Problem> {
        let start_side = self.start.side_to_move();
        let side_at = |plies: usize| {
            if plies.is_multiple_of(2) {
                start_side
            } else {
                !start_side
            }
        };
        // The person's last move goes, and every move after it.
        (0..self.line_len())
            .rev()
            .find(|&plies| side_at(plies) == human)
            .ok_or_else(|| Problem::new(Code::NothingToTakeBack, "no move of yours to take back"))
    }

    /// Every move gone.
    pub fn clear(&mut self) {
        self.nodes.clear();
        self.roots.clear();
        self.line.clear();
        self.cursor = 0;
    }

    /// Shows the line through `node` (then its main continuation), at `node`.
    pub fn choose(&mut self, node: usize) -> Result<(), Problem> {
        let mut path = Vec::new();
        let mut at = Some(node);
        while let Some(n) = at {
            let Some(entry) = self.nodes.get(n) else {
                return Err(no_move(node));
            };
            path.push(n);
            at = entry.parent;
        }
        path.reverse();
        // An unlinked (deleted) node is not reachable from the roots.
        if !self.reachable(&path) {
            return Err(no_move(node));
        }
        self.line = path;
        self.cursor = self.line.len();
        self.extend_line();
        Ok(())
    }

    fn reachable(&self, path: &[usize]) -> bool {
        let mut parent = None;
        for &node in path {
            if !self.children(parent).contains(&node) {
                return false;
            }
            parent = Some(node);
        }
        true
    }

    /// Makes the sideline `node` is on the first choice where it branches
    /// (the nearest move at or before it that is not a first choice).
    pub fn promote(&mut self, node: usize) -> Result<(), Problem> {
        let mut parent = self.linked(node)?;
        let mut node = node;
        while self.children(parent).first() == Some(&node) {
            let Some(up) = parent else {
                return Err(Problem::new(
                    Code::AlreadyMainLine,
                    "this move is on the main line already",
                ));
            };
            node = up;
            parent = self.nodes[up].parent;
        }
        let siblings = self.children_mut(parent);
        siblings.retain(|&n| n != node);
        siblings.insert(0, node);
        Ok(())
    }

    /// Deletes `node` and every move after it; the line shown, if it went
    /// through it, ends before it.
    pub fn delete(&mut self, node: usize) -> Result<(), Problem> {
        let parent = self.linked(node)?;
        self.children_mut(parent).retain(|&n| n != node);
        if let Some(index) = self.line.iter().position(|&n| n == node) {
            self.line.truncate(index);
            self.cursor = self.cursor.min(index);
            self.extend_line();
        }
        Ok(())
    }

    /// The parent of a node still in the tree.
    fn linked(&self, node: usize) -> Result<Option<usize>, Problem> {
        let entry = self.nodes.get(node).ok_or_else(|| no_move(node))?;
        if self.children(entry.parent).contains(&node) {
            Ok(entry.parent)
        } else {
            Err(no_move(node))
        }
    }

    /// The tree as PGN movetext tokens: each move, its `comment`, its
    /// comment in words, then its alternatives in parentheses (RAV).
    pub fn movetext(&self, comment: impl Fn(&Ply, Color) -> String) -> Vec<String> {
        let mut tokens = Vec::new();
        self.line_tokens(None, 0, true, &comment, &mut tokens);
        tokens
    }

    fn line_tokens(
        &self,
        parent: Option<usize>,
        ply: usize,
        numbered: bool,
        comment: &impl Fn(&Ply, Color) -> String,
        tokens: &mut Vec<String>,
    ) {
        let mut parent = parent;
        let mut ply = ply;
        let mut needs_number = numbered;
        while let Some(&node) = self.children(parent).first() {
            let (number, half) = self.move_number(ply);
            if half % 2 == 0 {
                tokens.push(format!("{number}."));
            } else if needs_number {
                tokens.push(format!("{number}..."));
            }
            let entry = &self.nodes[node];
            tokens.push(entry.ply.mv.clone());
            tokens.push(format!("{{{}}}", comment(&entry.ply, mover_of(half))));
            if let Some(text) = &entry.ply.comment {
                tokens.push(format!("{{{text}}}"));
            }
            needs_number = false;
            for &alternative in self.children(parent).iter().skip(1) {
                tokens.push("(".into());
                self.variation_tokens(alternative, ply, comment, tokens);
                tokens.push(")".into());
                needs_number = true;
            }
            parent = Some(node);
            ply += 1;
        }
    }

    /// A sideline: its first move (numbered), then its continuation.
    fn variation_tokens(
        &self,
        node: usize,
        ply: usize,
        comment: &impl Fn(&Ply, Color) -> String,
        tokens: &mut Vec<String>,
    ) {
        let (number, half) = self.move_number(ply);
        tokens.push(if half % 2 == 0 {
            format!("{number}.")
        } else {
            format!("{number}...")
        });
        let entry = &self.nodes[node];
        tokens.push(entry.ply.mv.clone());
        tokens.push(format!("{{{}}}", comment(&entry.ply, mover_of(half))));
        if let Some(text) = &entry.ply.comment {
            tokens.push(format!("{{{text}}}"));
        }
        self.line_tokens(Some(node), ply + 1, false, comment, tokens);
    }

    /// The move number of the ply `ply` plies from the start, and its
    /// half-move count from a White move (even for White).
    fn move_number(&self, ply: usize) -> (usize, usize) {
        let half = ply + usize::from(self.start.side_to_move() == Color::Black);
        (self.start.fullmove() as usize + half / 2, half)
    }

    /// The position after the first `plies` moves of the line shown.
    pub fn game_at(&self, plies: usize) -> Game {
        let mut game = Game::new(self.start);
        for ply in self.plies().take(plies) {
            if game.play_text(&ply.mv).is_err() {
                break;
            }
        }
        game
    }

    /// The protocol's `position` line after the first `plies` moves of the
    /// line shown (the moves, not only the position, for repetitions).
    pub fn position_line(&self, plies: usize) -> String {
        let mut line = format!("position fen {}", to_fen(&self.start));
        if plies > 0 {
            line.push_str(" moves");
            for ply in self.plies().take(plies) {
                line.push(' ');
                line.push_str(&ply.mv);
            }
        }
        line
    }

    /// The game at the end of the line shown.
    pub fn game(&self) -> Game {
        self.game_at(self.line_len())
    }

    /// The verdict of the whole game: by the board, or how it was stopped.
    pub fn verdict(&self) -> Option<Finish> {
        if let Some(finish) = &self.finish {
            return Some(finish.clone());
        }
        let result = self.game().result();
        let ending = Ending::by_rules(result)?;
        let winner = match result {
            GameResult::Win { winner, .. } => Some(winner),
            _ => None,
        };
        Some(Finish {
            winner,
            termination: ending.tag().into(),
            reason: result.describe(),
        })
    }

    /// The game as a PGN record in the `agon match -pgnout` format, both
    /// sides with the time control `control`, its sidelines as variations
    /// (RAV) and its comments kept.
    pub fn pgn(&self, control: &str) -> String {
        let mut main = self.clone();
        main.show_main_line();
        let game = main.game();
        let verdict = main.verdict();
        let result = match &verdict {
            Some(Finish {
                winner: Some(color),
                ..
            }) => Verdict::Win(*color),
            // An unfinished game is written as a draw, then marked `*` below.
            _ => Verdict::Draw,
        };
        let control = control.to_string();
        let record = GameRecord {
            game: 1,
            round: 1,
            white: self.names[0].clone(),
            black: self.names[1].clone(),
            result,
            // The tag is written from `verdict` below.
            termination: Ending::Adjudication,
            reason: verdict
                .as_ref()
                .map_or_else(|| "game in progress".to_string(), |f| f.reason.clone()),
            fen: to_fen(&self.start),
            book: Vec::new(),
            moves: Vec::new(),
            white_time_control: control.clone(),
            black_time_control: control,
            final_fen: to_fen(game.position()),
            date: crate::tools::match_runner::record::today(),
        };
        let placeholder = format!("[Termination \"{}\"]\n", Ending::Adjudication.tag());
        let termination = verdict.as_ref().map_or(String::new(), |f| {
            format!("[Termination \"{}\"]\n", f.termination)
        });
        let tagged = record.pgn().replacen(&placeholder, &termination, 1);
        let tags = tagged
            .find("\n\n")
            .map_or(tagged.as_str(), |end| &tagged[..end + 2]);
        let mut tokens = self.movetext(|ply, mover| {
            if ply.book {
                return "book".to_string();
            }
            let (cp, mate) = ply.score.map_or((None, None), |s| s.for_mover(mover));
            move_comment(&MoveRecord {
                text: ply.mv.clone(),
                score: cp.map(ScoreRecord::Cp).or(mate.map(ScoreRecord::Mate)),
                depth: ply.depth,
                time_ms: ply.time_ms.unwrap_or(0),
            })
        });
        tokens.push(format!("{{{}}}", record.reason));
        tokens.push(result.code().to_string());
        let text = format!("{tags}{}\n\n", wrap(&tokens, 79));
        if verdict.is_some() {
            return text;
        }
        let draw = Verdict::Draw.code();
        let text = text.replacen(&format!("[Result \"{draw}\"]"), "[Result \"*\"]", 1);
        match text.strip_suffix(&format!("{draw}\n\n")) {
            Some(body) => format!("{body}*\n\n"),
            None => text,
        }
    }
}

/// Adds a read line and its variations after the first `at` plies of the line shown.
fn add_read_line(record: &mut Record, at: usize, moves: &[ReadMove]) {
    for (offset, read) in moves.iter().enumerate() {
        let here = at + offset;
        record.play_at(
            here,
            Ply {
                mv: read.text.clone(),
                score: read.score,
                depth: read.depth,
                time_ms: read.time_ms,
                book: read.book,
                comment: read.comment.clone(),
            },
        );
        let Some(main) = record.node_at(here) else {
            return;
        };
        for variation in &read.variations {
            add_read_line(record, here, variation);
            // Back on the line being read.
            let _ = record.choose(main);
        }
    }
}

/// Who moves at a half-move count from a White move.
fn mover_of(half: usize) -> Color {
    if half.is_multiple_of(2) {
        Color::White
    } else {
        Color::Black
    }
}

/// No move `node` in the tree.
fn no_move(node: usize) -> Problem {
    Problem::new(Code::NoMove, format!("no move {node}")).with("node", node)
}

impl Session {
    pub(super) fn load(&mut self, read: &ReadGame) -> Result<(), Problem> {
        let start = read_start(Some(&read.fen))?;
        self.reset(start, Mode::Analysis, None);
        self.record.clear();
        add_read_line(&mut self.record, 0, &read.moves);
        self.record.show_main_line();
        self.record.cursor = 0;
        self.record.names = [
            read.tag("White").unwrap_or("?").to_string(),
            read.tag("Black").unwrap_or("?").to_string(),
        ];
        if self.record.game().result() == GameResult::Ongoing && read.result != "*" {
            let winner = match read.result.as_str() {
                "1-0" => Some(Color::White),
                "0-1" => Some(Color::Black),
                _ => None,
            };
            self.record.finish = Some(Finish {
                winner,
                termination: read.tag("Termination").unwrap_or("?").to_string(),
                reason: read.reason.clone().unwrap_or_else(|| read.result.clone()),
            });
        }
        Ok(())
    }

    /// Takes the games of a PGN text (read by `read_games` before the
    /// session is locked: a long text must not hold the page's server up);
    /// one game is opened, several are listed.
    pub fn import(&mut self, games: Vec<ReadGame>) -> Result<usize, Problem> {
        let count = games.len();
        self.library = games;
        if let Some(first) = self.library.first().cloned() {
            self.load(&first)?;
        }
        self.kick();
        self.publish_state();
        Ok(count)
    }

    /// The game as a PGN record in the `agon match -pgnout` format, its
    /// sidelines as variations (RAV) and its comments kept.
    pub fn export(&self) -> String {
        let control = self
            .clocks
            .map_or_else(|| "-".to_string(), |c| c.describe());
        self.record.pgn(&control)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::rules::start_position;

    /// A record of these moves from the start position.
    pub(in crate::tools::gui::session) fn record_of(moves: &[&str]) -> Record {
        let mut record = Record::new(start_position(), ["a".into(), "b".into()]);
        for (at, mv) in moves.iter().enumerate() {
            record.play_at(
                at,
                Ply {
                    mv: (*mv).to_string(),
                    score: None,
                    depth: None,
                    time_ms: None,
                    book: false,
                    comment: None,
                },
            );
        }
        record
    }

    #[test]
    fn a_take_back_goes_to_the_persons_previous_turn() {
        let moves = ["b1c1", "b7c7", "c1d1", "c7d7"];
        // White moves first from the start position.
        let kept = |plies: usize, human: Color| record_of(&moves[..plies]).take_back_point(human);
        assert_eq!(kept(1, Color::White).ok(), Some(0));
        assert_eq!(kept(2, Color::White).ok(), Some(0));
        assert_eq!(kept(3, Color::White).ok(), Some(2));
        assert_eq!(kept(4, Color::White).ok(), Some(2));
        assert_eq!(kept(2, Color::Black).ok(), Some(1));
        assert_eq!(kept(3, Color::Black).ok(), Some(1));
        assert_eq!(kept(4, Color::Black).ok(), Some(3));
        for (plies, human) in [(0, Color::White), (0, Color::Black), (1, Color::Black)] {
            let refused = kept(plies, human).unwrap_err();
            assert_eq!(refused.code, Code::NothingToTakeBack, "{plies} {human:?}");
        }
    }
}
