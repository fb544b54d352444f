//! The result block printed by match runners, line by line.

use super::sprt::SprtConfig;
use super::tally::Tally;

/// Fixed-point text for report lines: "inf"/"-inf" for infinities, "n/a" for NaN, and no "-0.00".
pub(super) fn fixed(x: f64, decimals: usize) -> String {
    if x.is_nan() {
        return "n/a".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    let text = format!("{x:.decimals$}");
    // A tiny negative value rounds to all zeros; the sign would only suggest a difference that is not there.
    if text.starts_with('-') && text.bytes().all(|b| matches!(b, b'-' | b'0' | b'.')) {
        text[1..].to_string()
    } else {
        text
    }
}

/// Like [`fixed`], with "n/a" for an undefined ratio.
pub(super) fn fixed_ratio(x: Option<f64>, decimals: usize) -> String {
    x.map_or_else(|| "n/a".to_string(), |v| fixed(v, decimals))
}

/// The result block of a match, shaped like fastchess's report:
///
/// ```text
/// Elo: 22.42 +/- 22.94, nElo: 31.51 +/- 32.10
/// LOS: 97.29 %, DrawRatio: 40.00 %, PairsRatio: 1.37
/// Games: 450, Wins: 128, Losses: 99, Draws: 223, Points: 239.5 (53.22 %)
/// Ptnml(0-2): [12, 45, 90, 58, 20], WL/DD Ratio: 0.50
/// LLR: 0.54 (18.4%) (-2.94, 2.94) [0.00, 5.00]
/// ```
///
/// With pairs, Elo, nElo and DrawRatio (pairs scoring one point) come from the pentanomial counts;
/// without pairs the PairsRatio and Ptnml parts are left out and everything is trinomial. The LLR line
/// appears only with an SPRT. Degenerate tallies print "inf" or "n/a", never NaN.
pub fn summary_lines(tally: &Tally, sprt: Option<&SprtConfig>) -> Vec<String> {
    let has_pairs = tally.pairs() > 0;
    let elo = tally.elo();
    let nelo = tally.nelo();
    let mut lines = Vec::with_capacity(5);
    lines.push(format!(
        "Elo: {} +/- {}, nElo: {} +/- {}",
        fixed(elo.value, 2),
        fixed(elo.error, 2),
        fixed(nelo.value, 2),
        fixed(nelo.error, 2)
    ));
    let los_pct = fixed(tally.los() * 100.0, 2);
    if has_pairs {
        lines.push(format!(
            "LOS: {los_pct} %, DrawRatio: {} %, PairsRatio: {}",
            fixed(tally.pair_draw_ratio() * 100.0, 2),
            fixed_ratio(tally.pairs_ratio(), 2)
        ));
    } else {
        lines.push(format!(
            "LOS: {los_pct} %, DrawRatio: {} %",
            fixed(tally.draw_ratio() * 100.0, 2)
        ));
    }
    // An empty tally scores "0.5" internally; 0 % reads better next to zero points.
    let points_pct = if tally.games() == 0 {
        0.0
    } else {
        tally.score() * 100.0
    };
    lines.push(format!(
        "Games: {}, Wins: {}, Losses: {}, Draws: {}, Points: {} ({} %)",
        tally.games(),
        tally.wins,
        tally.losses,
        tally.draws,
        fixed(tally.points(), 1),
        fixed(points_pct, 2)
    ));
    if has_pairs {
        let p = &tally.ptnml;
        lines.push(format!(
            "Ptnml(0-2): [{}, {}, {}, {}, {}], WL/DD Ratio: {}",
            p[0],
            p[1],
            p[2],
            p[3],
            p[4],
            fixed_ratio(tally.wl_dd_ratio(), 2)
        ));
    }
    if let Some(config) = sprt {
        let status = config.status(tally);
        lines.push(format!(
            "LLR: {} ({}%) ({}, {}) [{}, {}]",
            fixed(status.llr, 2),
            fixed(status.bound_percentage(), 1),
            fixed(status.lower, 2),
            fixed(status.upper, 2),
            fixed(config.elo0, 2),
            fixed(config.elo1, 2)
        ));
    }
    lines
}
