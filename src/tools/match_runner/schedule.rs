//! The schedule of a match: where each game sits (round, encounter, pair,
//! colours, opening), which shard plays it, and the standing of finished
//! games with pairs kept together, the same whichever process played them.

use super::draws::DrawTally;
use super::options::MatchConfig;
use super::record::{GameRecord, Verdict};
use crate::rules::Color;
use crate::tools::stats::{SprtConfig, Tally, summary_lines};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where game `number` sits in the schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// 0-based round.
    pub round: u64,
    /// Index into [`MatchConfig::encounters`].
    pub encounter: usize,
    /// 0-based unit of the encounter over the whole run: a pair of games
    /// with `-repeat`, else one game.
    pub unit: u64,
    /// Whether the encounter's first engine has White.
    pub first_is_white: bool,
    /// 0-based opening number.
    pub opening: u64,
}

impl Slot {
    /// The unit's number over every encounter (units of all encounters in
    /// turn), by which shards share out the schedule.
    pub fn shared_unit(&self, encounters: usize) -> u64 {
        self.unit
            .saturating_mul(encounters as u64)
            .saturating_add(self.encounter as u64)
    }
}

/// Places 0-based game `index` in the schedule: rounds, then encounters,
/// then the `-games` games of the encounter in that round.
///
/// As in cutechess-cli, the games of an encounter form one sequence over
/// all rounds: colours alternate from game to game, and with `-repeat`
/// each opening serves two consecutive games (a pair), so `-games 2
/// -rounds 3 -repeat` is 6 games from 3 openings.
pub fn slot(config: &MatchConfig, encounters: usize, index: u64) -> Slot {
    let per_round = config.games * encounters as u64;
    let round = index / per_round;
    let encounter = (index % per_round / config.games) as usize;
    let sequence = round * config.games + index % config.games;
    let unit = sequence / config.games_per_unit();
    Slot {
        round,
        encounter,
        unit,
        first_is_white: sequence.is_multiple_of(2),
        opening: unit,
    }
}

/// Whether 0-based game `index` is played by this process's shard.
pub fn is_own_game(config: &MatchConfig, encounters: usize, index: u64) -> bool {
    config
        .shard
        .owns(slot(config, encounters, index).shared_unit(encounters))
}

/// The results of a set of games (one process's, or a merged run's), tallied
/// for each encounter from its first engine's side with pairs kept
/// together: what the statistics, the SPRT and a resumed run need, without
/// the games themselves, and the same whichever process played them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Standing {
    /// Single games and complete pairs of each encounter.
    tallies: Vec<Tally>,
    /// Games whose pair partner is not counted yet, by 1-based number.
    open: BTreeMap<u64, Verdict>,
    /// The drawn games of each encounter (none in a state written before
    /// they were counted: then they cover only the games played since).
    #[serde(default)]
    draws: Vec<DrawTally>,
}

impl Standing {
    /// The first game waiting for its pair partner whose number is not
    /// one of `total` games (numbers start at 1), if any: a state file
    /// read from disk must not bring in a game outside its run.
    pub fn open_game_outside(&self, total: u64) -> Option<u64> {
        self.open
            .keys()
            .copied()
            .find(|&number| number == 0 || number > total)
    }

    /// Counts `record`, the game of its number.
    pub fn add(&mut self, config: &MatchConfig, record: &GameRecord) {
        let encounters = config.encounters().len();
        let place = slot(config, encounters, record.game - 1);
        if self.draws.len() < encounters {
            self.draws.resize(encounters, DrawTally::default());
        }
        self.draws[place.encounter].add(record, first_engine_color(&place));
        self.add_result(config, record.game, record.result);
    }

    /// Counts game `number` (1-based) with its result, in its encounter's
    /// tally or, with `-repeat`, with its pair partner once both are in.
    fn add_result(&mut self, config: &MatchConfig, number: u64, result: Verdict) {
        let encounters = config.encounters().len();
        if self.tallies.len() < encounters {
            self.tallies.resize(encounters, Tally::new());
        }
        let place = slot(config, encounters, number - 1);
        let outcome = result.outcome_for(first_engine_color(&place));
        if !config.repeat {
            self.tallies[place.encounter].add_game(outcome);
            return;
        }
        let partner = self.open.iter().find_map(|(&other, &verdict)| {
            let other_place = slot(config, encounters, other - 1);
            ((other_place.encounter, other_place.unit) == (place.encounter, place.unit))
                .then(|| (other, verdict.outcome_for(first_engine_color(&other_place))))
        });
        match partner {
            Some((other, partner_outcome)) => {
                self.open.remove(&other);
                let (first, second) = if other < number {
                    (partner_outcome, outcome)
                } else {
                    (outcome, partner_outcome)
                };
                self.tallies[place.encounter].add_pair(first, second);
            }
            None => {
                self.open.insert(number, result);
            }
        }
    }

    /// Counts every game of `other` too (pairs never span shards, so two
    /// shards' standings add up to the standing of all their games).
    pub fn merge(&mut self, config: &MatchConfig, other: &Standing) {
        if self.tallies.len() < other.tallies.len() {
            self.tallies.resize(other.tallies.len(), Tally::new());
        }
        for (mine, theirs) in self.tallies.iter_mut().zip(&other.tallies) {
            mine.merge(theirs);
        }
        if self.draws.len() < other.draws.len() {
            self.draws.resize(other.draws.len(), DrawTally::default());
        }
        for (mine, theirs) in self.draws.iter_mut().zip(&other.draws) {
            mine.merge(theirs);
        }
        for (&number, &result) in &other.open {
            self.add_result(config, number, result);
        }
    }

    /// Whether `other` counts the same results (the draws aside, which a
    /// state of an older version does not hold).
    pub fn same_results(&self, other: &Standing) -> bool {
        (&self.tallies, &self.open) == (&other.tallies, &other.open)
    }

    /// Games counted.
    pub fn games(&self) -> u64 {
        self.tallies.iter().map(Tally::games).sum::<u64>() + self.open.len() as u64
    }

    /// Each encounter's tally, a game whose partner is missing counted alone.
    pub fn tallies(&self, config: &MatchConfig) -> Vec<Tally> {
        let encounters = config.encounters().len();
        let mut tallies = self.tallies.clone();
        tallies.resize(encounters.max(tallies.len()), Tally::new());
        for (&number, &result) in &self.open {
            let place = slot(config, encounters, number - 1);
            tallies[place.encounter].add_game(result.outcome_for(first_engine_color(&place)));
        }
        tallies
    }

    /// The test's encounter (the only or first one).
    pub fn first_tally(&self, config: &MatchConfig) -> Tally {
        self.tallies(config).into_iter().next().unwrap_or_default()
    }
}

fn first_engine_color(place: &Slot) -> Color {
    if place.first_is_white {
        Color::White
    } else {
        Color::Black
    }
}

/// The statistics block of every encounter that has games (of the only
/// one when there is one): a heading, then the summary lines.
pub fn statistics_lines(config: &MatchConfig, standing: &Standing) -> Vec<String> {
    let encounters = config.encounters();
    let sprt: Option<&SprtConfig> = config.sprt.as_ref();
    let tallies = standing.tallies(config);
    let mut lines = Vec::new();
    for (index, (&(first, second), tally)) in encounters.iter().zip(&tallies).enumerate() {
        if tally.games() == 0 && encounters.len() > 1 {
            continue;
        }
        let engines = &config.engines;
        lines.push(format!(
            "Results of {} vs {} ({}, {}):",
            engines[first].name,
            engines[second].name,
            engines[first].limits.describe(),
            engines[second].limits.describe()
        ));
        lines.extend(summary_lines(tally, sprt));
        let draws = standing.draws.get(index).copied().unwrap_or_default();
        lines.extend(draws.line(&engines[first].name, &engines[second].name));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::match_runner::options::{Request, parse};
    use crate::tools::match_runner::record::Ending;
    use std::collections::BTreeSet;

    fn config(text: &str) -> MatchConfig {
        let args: Vec<String> = text.split_whitespace().map(str::to_string).collect();
        match parse(&args) {
            Ok(Request::Run(config)) => *config,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn pairs_share_an_opening_and_swap_colours() {
        let config = config("-engine cmd=a -engine cmd=b -each st=1 -games 4 -repeat -rounds 2");
        let places: Vec<Slot> = (0..config.total_games())
            .map(|i| slot(&config, 1, i))
            .collect();
        assert_eq!(places.len(), 8);
        assert_eq!(places[0].opening, places[1].opening);
        assert!(places[0].first_is_white && !places[1].first_is_white);
        assert_eq!(places[2].opening, 1);
        assert_eq!((places[4].round, places[4].opening), (1, 2));
    }

    #[test]
    fn games_rounds_and_repeat_count_as_in_cutechess() {
        for (text, games, openings) in [
            ("-rounds 100 -games 2 -repeat", 200, 100),
            ("-games 2 -rounds 3 -repeat", 6, 3),
            ("-games 100 -repeat", 100, 50),
            ("-games 100", 100, 100),
            ("-rounds 3", 3, 3),
        ] {
            let config = config(&format!("-engine cmd=a -engine cmd=b -each st=1 {text}"));
            assert_eq!(config.total_games(), games, "{text}");
            let used: BTreeSet<u64> = (0..games).map(|i| slot(&config, 1, i).opening).collect();
            assert_eq!(used.len() as u64, openings, "{text}");
        }
        // A pair may span two rounds when -games is odd, as in cutechess-cli.
        let odd = config("-engine cmd=a -engine cmd=b -each st=1 -games 1 -rounds 2 -repeat");
        let (first, second) = (slot(&odd, 1, 0), slot(&odd, 1, 1));
        assert_eq!((first.round, second.round), (0, 1));
        assert_eq!(first.opening, second.opening);
        assert!(first.first_is_white && !second.first_is_white);
    }

    #[test]
    fn single_games_alternate_colours_across_encounters() {
        let config = config("-engine cmd=a -engine cmd=b -engine cmd=c -each st=1 -games 2");
        let places: Vec<Slot> = (0..config.total_games())
            .map(|i| slot(&config, 3, i))
            .collect();
        let summary: Vec<(usize, bool)> = places
            .iter()
            .map(|p| (p.encounter, p.first_is_white))
            .collect();
        assert_eq!(
            summary,
            vec![
                (0, true),
                (0, false),
                (1, true),
                (1, false),
                (2, true),
                (2, false)
            ]
        );
    }

    #[test]
    fn shards_split_the_schedule_into_whole_pairs() {
        let whole = config(
            "-engine cmd=a -engine cmd=b -engine cmd=c -each st=1 -games 3 -rounds 3 -repeat",
        );
        let total = whole.total_games();
        let mut seen = BTreeSet::new();
        for number in 1..=4 {
            let mut part = whole.clone();
            part.shard = crate::tools::shard::Shard::new(number, 4).unwrap();
            let own: Vec<u64> = (0..total).filter(|&i| is_own_game(&part, 3, i)).collect();
            assert!(!own.is_empty());
            for &index in &own {
                assert!(seen.insert(index), "game {index} in two shards");
                // Its partner is in the same shard.
                let place = slot(&part, 3, index);
                let partners = (0..total).filter(|&j| {
                    let other = slot(&part, 3, j);
                    (other.encounter, other.unit) == (place.encounter, place.unit)
                });
                assert!(partners.into_iter().all(|j| is_own_game(&part, 3, j)));
            }
        }
        assert_eq!(seen.len() as u64, total);
    }

    #[test]
    fn shards_standings_merge_into_the_standing_of_all_games() {
        let whole = config(
            "-engine cmd=a -engine cmd=b -engine cmd=c -each st=1 -games 3 -rounds 3 -repeat",
        );
        let verdicts = [
            Verdict::Win(Color::White),
            Verdict::Draw,
            Verdict::Win(Color::Black),
            Verdict::Draw,
            Verdict::Win(Color::White),
        ];
        let game = |number: u64| {
            let verdict = verdicts[(number * 7 % 5) as usize];
            GameRecord::sample(number, verdict, Ending::Repetition)
        };
        let total = whole.total_games();
        let mut all = Standing::default();
        for number in 1..=total {
            all.add(&whole, &game(number));
        }
        assert_eq!(all.games(), total);
        let mut merged = Standing::default();
        for part in 1..=4 {
            let mut shard = whole.clone();
            shard.shard = crate::tools::shard::Shard::new(part, 4).unwrap();
            let mut own = Standing::default();
            // Later games first: a pair is the same pair in either order.
            for number in (1..=total).rev().filter(|&n| is_own_game(&shard, 3, n - 1)) {
                own.add(&whole, &game(number));
            }
            merged.merge(&whole, &own);
        }
        assert_eq!(merged.tallies(&whole), all.tallies(&whole));
        assert_eq!(merged.draws, all.draws);
        let drawn = (1..=total).filter(|&n| game(n).result == Verdict::Draw);
        assert_eq!(
            all.draws.iter().map(DrawTally::draws).sum::<u64>(),
            drawn.count() as u64
        );
        // A game whose partner is missing counts alone.
        let mut open = Standing::default();
        open.add(
            &whole,
            &GameRecord::sample(1, Verdict::Win(Color::White), Ending::Formation),
        );
        let tally = open.first_tally(&whole);
        assert_eq!((tally.wins, tally.pairs()), (1, 0));
        open.add(
            &whole,
            &GameRecord::sample(2, Verdict::Draw, Ending::Repetition),
        );
        assert_eq!(open.first_tally(&whole).pairs(), 1);
    }
}
