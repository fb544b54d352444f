//! The games of `agon serve` in SQLite: one row a game, one row a move, each
//! change one transaction committed (WAL, full sync) before it is
//! acknowledged, the schema versioned by `PRAGMA user_version` with the
//! migrations that bring an older file up to date.

use rusqlite::{Connection, OptionalExtension, params};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// Migrations in order; the database's `user_version` counts those applied.
const MIGRATIONS: &[&str] = &[
    // 1: games and their moves.
    "CREATE TABLE games (
        id TEXT PRIMARY KEY,
        visitor TEXT NOT NULL,
        level INTEGER NOT NULL,
        human TEXT NOT NULL CHECK (human IN ('white', 'black')),
        start_fen TEXT NOT NULL,
        created INTEGER NOT NULL,
        updated INTEGER NOT NULL,
        winner TEXT,
        termination TEXT,
        reason TEXT
     );
     CREATE INDEX games_by_visitor ON games (visitor, updated);
     CREATE TABLE moves (
        game TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
        ply INTEGER NOT NULL,
        mv TEXT NOT NULL,
        PRIMARY KEY (game, ply)
     ) WITHOUT ROWID;",
    // 2: finished games found by age for pruning.
    "CREATE INDEX games_finished ON games (termination, updated);",
];

/// How a game ended when it is over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ending {
    /// `white`, `black`, or `None` for a draw.
    pub winner: Option<String>,
    /// The PGN `Termination` value.
    pub termination: String,
    /// In words.
    pub reason: String,
}

/// One stored game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredGame {
    /// Random 128-bit id, hex.
    pub id: String,
    /// The visitor's id.
    pub visitor: String,
    /// Strength level of the engine.
    pub level: usize,
    /// `white` or `black`: the visitor's colour.
    pub human: String,
    /// Where the game started.
    pub start_fen: String,
    /// Moves played, in order.
    pub moves: Vec<String>,
    /// Set once the game is over.
    pub ending: Option<Ending>,
    /// Last change, seconds since 1970.
    pub updated: i64,
}

/// An unfinished game as a start-up lists them: whose turn it is, not its moves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unfinished {
    /// The game's id.
    pub id: String,
    /// The visitor's id.
    pub visitor: String,
    /// `white` or `black`: the visitor's colour.
    pub human: String,
    /// Where the game started.
    pub start_fen: String,
    /// Moves played.
    pub plies: usize,
}

/// The database.
pub struct Store {
    connection: Connection,
}

/// Seconds since 1970.
pub fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

fn index_of(level: i64) -> usize {
    usize::try_from(level).unwrap_or(0)
}

impl Store {
    /// Opens (or creates) the database and brings its schema up to date.
    pub fn open(path: &Path) -> Result<Store, String> {
        let connection = Connection::open(path)
            .map_err(|e| format!("cannot open the database {}: {e}", path.display()))?;
        Store::set_up(connection).map_err(|e| format!("database {}: {e}", path.display()))
    }

    fn set_up(mut connection: Connection) -> Result<Store, String> {
        Store::configure(&connection).map_err(|e| e.to_string())?;
        let version: usize = connection
            .pragma_query_value(None, "user_version", |row| {
                row.get::<_, i64>(0).map(index_of)
            })
            .map_err(|e| e.to_string())?;
        if version > MIGRATIONS.len() {
            return Err(format!(
                "schema version {version} is newer than this agon knows ({})",
                MIGRATIONS.len()
            ));
        }
        for (applied, migration) in MIGRATIONS.iter().enumerate().skip(version) {
            let migrate = |connection: &mut Connection| -> rusqlite::Result<()> {
                let transaction = connection.transaction()?;
                transaction.execute_batch(migration)?;
                transaction.pragma_update(
                    None,
                    "user_version",
                    i64::try_from(applied + 1).unwrap_or(0),
                )?;
                transaction.commit()
            };
            migrate(&mut connection).map_err(|e| format!("migration {}: {e}", applied + 1))?;
            log::info!("database schema migrated to version {}", applied + 1);
        }
        Ok(Store { connection })
    }

    fn configure(connection: &Connection) -> rusqlite::Result<()> {
        connection.busy_timeout(std::time::Duration::from_secs(5))?;
        connection.pragma_update(None, "journal_mode", "WAL")?;
        connection.pragma_update(None, "synchronous", "FULL")?;
        connection.pragma_update(None, "foreign_keys", "ON")
    }

    /// The schema version of the open database.
    pub fn schema_version(&self) -> Result<i64, String> {
        self.connection
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(|e| e.to_string())
    }

    /// Stores a new game with its moves so far, in one transaction.
    pub fn create(&mut self, game: &StoredGame) -> Result<(), String> {
        let transaction = self.connection.transaction().map_err(|e| e.to_string())?;
        transaction
            .execute(
                "INSERT INTO games (id, visitor, level, human, start_fen, created, updated)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
                params![
                    game.id,
                    game.visitor,
                    i64::try_from(game.level).unwrap_or(0),
                    game.human,
                    game.start_fen,
                    game.updated
                ],
            )
            .map_err(|e| e.to_string())?;
        for (ply, mv) in game.moves.iter().enumerate() {
            insert_move(&transaction, &game.id, ply, mv)?;
        }
        write_ending(&transaction, &game.id, game.ending.as_ref(), game.updated)?;
        transaction.commit().map_err(|e| e.to_string())
    }

    /// Appends the move of ply `ply` (and the ending it brings), in one transaction.
    pub fn append(
        &mut self,
        game: &str,
        ply: usize,
        mv: &str,
        ending: Option<&Ending>,
    ) -> Result<(), String> {
        let transaction = self.connection.transaction().map_err(|e| e.to_string())?;
        insert_move(&transaction, game, ply, mv)?;
        write_ending(&transaction, game, ending, now())?;
        transaction.commit().map_err(|e| e.to_string())
    }

    /// Keeps the first `plies` moves and sets the ending (a takeback or a resignation).
    pub fn rewrite_end(
        &mut self,
        game: &str,
        plies: usize,
        ending: Option<&Ending>,
    ) -> Result<(), String> {
        let transaction = self.connection.transaction().map_err(|e| e.to_string())?;
        transaction
            .execute(
                "DELETE FROM moves WHERE game = ?1 AND ply >= ?2",
                params![game, i64::try_from(plies).unwrap_or(i64::MAX)],
            )
            .map_err(|e| e.to_string())?;
        write_ending(&transaction, game, ending, now())?;
        transaction.commit().map_err(|e| e.to_string())
    }

    /// The visitor's most recently changed games, at most `limit`, and
    /// every game of theirs still in progress, newest first: the limit of
    /// games in progress counts them all.
    pub fn games_of(&self, visitor: &str, limit: usize) -> Result<Vec<StoredGame>, String> {
        let ids: Vec<String> = {
            let mut statement = self
                .connection
                .prepare_cached(
                    "SELECT id FROM games WHERE visitor = ?1 AND (termination IS NULL OR id IN \
                       (SELECT id FROM games WHERE visitor = ?1 \
                        ORDER BY updated DESC, rowid DESC LIMIT ?2)) \
                     ORDER BY updated DESC, rowid DESC",
                )
                .map_err(|e| e.to_string())?;
            statement
                .query_map(
                    params![visitor, i64::try_from(limit).unwrap_or(i64::MAX)],
                    |row| row.get(0),
                )
                .and_then(Iterator::collect)
                .map_err(|e| e.to_string())?
        };
        ids.iter()
            .filter_map(|id| self.game(id).transpose())
            .collect()
    }

    /// The unfinished games, oldest change first (to search again after a
    /// restart the engine's moves due).
    pub fn unfinished(&self) -> Result<Vec<Unfinished>, String> {
        let mut statement = self
            .connection
            .prepare(
                "SELECT id, visitor, human, start_fen, \
                   (SELECT count(*) FROM moves WHERE moves.game = games.id) \
                 FROM games WHERE termination IS NULL ORDER BY updated",
            )
            .map_err(|e| e.to_string())?;
        statement
            .query_map([], |row| {
                Ok(Unfinished {
                    id: row.get(0)?,
                    visitor: row.get(1)?,
                    human: row.get(2)?,
                    start_fen: row.get(3)?,
                    plies: index_of(row.get(4)?),
                })
            })
            .and_then(Iterator::collect)
            .map_err(|e| e.to_string())
    }

    /// One game by id.
    pub fn game(&self, id: &str) -> Result<Option<StoredGame>, String> {
        let row = self
            .connection
            .query_row(
                "SELECT visitor, level, human, start_fen, updated, winner, termination, reason
                 FROM games WHERE id = ?1",
                params![id],
                |row| {
                    let termination: Option<String> = row.get(6)?;
                    Ok(StoredGame {
                        id: id.to_string(),
                        visitor: row.get(0)?,
                        level: index_of(row.get(1)?),
                        human: row.get(2)?,
                        start_fen: row.get(3)?,
                        moves: Vec::new(),
                        updated: row.get(4)?,
                        ending: match termination {
                            Some(termination) => Some(Ending {
                                winner: row.get(5)?,
                                termination,
                                reason: row.get::<_, Option<String>>(7)?.unwrap_or_default(),
                            }),
                            None => None,
                        },
                    })
                },
            )
            .optional()
            .map_err(|e| e.to_string())?;
        let Some(mut game) = row else {
            return Ok(None);
        };
        let mut statement = self
            .connection
            .prepare_cached("SELECT mv FROM moves WHERE game = ?1 ORDER BY ply")
            .map_err(|e| e.to_string())?;
        game.moves = statement
            .query_map(params![id], |row| row.get(0))
            .and_then(Iterator::collect)
            .map_err(|e| e.to_string())?;
        Ok(Some(game))
    }

    /// How many games are not finished.
    pub fn count_unfinished(&self) -> Result<u64, String> {
        self.connection
            .query_row(
                "SELECT count(*) FROM games WHERE termination IS NULL",
                [],
                |row| row.get::<_, i64>(0),
            )
            .map(|n| u64::try_from(n).unwrap_or(0))
            .map_err(|e| e.to_string())
    }

    /// Deletes finished games unchanged since `finished_before` and
    /// unfinished ones unchanged since `abandoned_before`, but those of the
    /// visitors `in_play` names; returns how many.
    pub fn prune(
        &mut self,
        finished_before: i64,
        abandoned_before: i64,
        in_play: impl Fn(&str) -> bool,
    ) -> Result<usize, String> {
        let transaction = self.connection.transaction().map_err(|e| e.to_string())?;
        let mut deleted = transaction
            .execute(
                "DELETE FROM games WHERE termination IS NOT NULL AND updated < ?1",
                params![finished_before],
            )
            .map_err(|e| e.to_string())?;
        let abandoned: Vec<(String, String)> = {
            let mut statement = transaction
                .prepare("SELECT id, visitor FROM games WHERE termination IS NULL AND updated < ?1")
                .map_err(|e| e.to_string())?;
            statement
                .query_map(params![abandoned_before], |row| {
                    Ok((row.get(0)?, row.get(1)?))
                })
                .and_then(Iterator::collect)
                .map_err(|e| e.to_string())?
        };
        for (game, visitor) in abandoned {
            if !in_play(&visitor) {
                deleted += transaction
                    .execute("DELETE FROM games WHERE id = ?1", params![game])
                    .map_err(|e| e.to_string())?;
            }
        }
        transaction.commit().map_err(|e| e.to_string())?;
        Ok(deleted)
    }
}

fn insert_move(
    transaction: &rusqlite::Transaction<'_>,
    game: &str,
    ply: usize,
    mv: &str,
) -> Result<(), String> {
    transaction
        .execute(
            "INSERT INTO moves (game, ply, mv) VALUES (?1, ?2, ?3)",
            params![game, i64::try_from(ply).unwrap_or(i64::MAX), mv],
        )
        .map(drop)
        .map_err(|e| e.to_string())
}

fn write_ending(
    transaction: &rusqlite::Transaction<'_>,
    game: &str,
    ending: Option<&Ending>,
    updated: i64,
) -> Result<(), String> {
    let changed = transaction
        .execute(
            "UPDATE games SET updated = ?2, winner = ?3, termination = ?4, reason = ?5 WHERE id = ?1",
            params![
                game,
                updated,
                ending.and_then(|e| e.winner.clone()),
                ending.map(|e| e.termination.clone()),
                ending.map(|e| e.reason.clone())
            ],
        )
        .map_err(|e| e.to_string())?;
    if changed == 1 {
        Ok(())
    } else {
        Err(format!("no game {game} in the database"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(id: &str, moves: &[&str]) -> StoredGame {
        StoredGame {
            id: id.into(),
            visitor: "v".into(),
            level: 0,
            human: "white".into(),
            start_fen: crate::rules::START_FEN.into(),
            moves: moves.iter().map(|m| m.to_string()).collect(),
            ending: None,
            updated: now(),
        }
    }

    #[test]
    fn moves_and_endings_survive_reopening_and_a_ply_is_never_doubled() {
        let dir = crate::tools::scratch_dir("store");
        let path = dir.path().join("games.sqlite");
        {
            let mut store = Store::open(&path).unwrap();
            store.create(&game("g1", &["a1b1"])).unwrap();
            store.append("g1", 1, "c1d1", None).unwrap();
            assert!(store.append("g1", 1, "e1f1", None).is_err());
            assert!(store.append("nope", 0, "e1f1", None).is_err());
            let ending = Ending {
                winner: Some("black".into()),
                termination: "resignation".into(),
                reason: "White resigned".into(),
            };
            store.rewrite_end("g1", 1, Some(&ending)).unwrap();
        }
        let store = Store::open(&path).unwrap();
        assert_eq!(store.schema_version().unwrap(), MIGRATIONS.len() as i64);
        let read = store.game("g1").unwrap().unwrap();
        assert_eq!(read.moves, vec!["a1b1"]);
        assert_eq!(read.ending.unwrap().termination, "resignation");
        assert_eq!(store.count_unfinished().unwrap(), 0);
        assert_eq!(store.games_of("v", 10).unwrap().len(), 1);
    }

    #[test]
    fn pruning_deletes_by_age_and_spares_the_games_in_play() {
        let dir = crate::tools::scratch_dir("store-prune");
        let mut store = Store::open(&dir.path().join("games.sqlite")).unwrap();
        let day = 86_400;
        let now = now();
        let over = Ending {
            winner: None,
            termination: "normal".into(),
            reason: "a draw".into(),
        };
        let aged = |id: &str, visitor: &str, days: i64, ending: Option<&Ending>| StoredGame {
            visitor: visitor.into(),
            ending: ending.cloned(),
            updated: now - days * day,
            ..game(id, &["a1b1"])
        };
        for stored in [
            aged("finished-long-ago", "a", 40, Some(&over)),
            aged("finished-lately", "a", 10, Some(&over)),
            aged("abandoned", "a", 100, None),
            aged("in-play", "b", 100, None),
            aged("paused", "a", 40, None),
        ] {
            store.create(&stored).unwrap();
        }
        let pruned = store.prune(now - 30 * day, now - 90 * day, |visitor| visitor == "b");
        assert_eq!(pruned, Ok(2));
        let kept: Vec<&str> = [
            "finished-long-ago",
            "finished-lately",
            "abandoned",
            "in-play",
            "paused",
        ]
        .into_iter()
        .filter(|id| store.game(id).unwrap().is_some())
        .collect();
        assert_eq!(kept, ["finished-lately", "in-play", "paused"]);
        assert_eq!(store.count_unfinished(), Ok(2));
        let unfinished: Vec<(String, usize)> = store
            .unfinished()
            .unwrap()
            .into_iter()
            .map(|game| (game.id, game.plies))
            .collect();
        assert_eq!(
            unfinished,
            [("in-play".to_string(), 1), ("paused".to_string(), 1)]
        );
    }
}
