//! Counters and histograms of `agon serve`, written out in the Prometheus
//! text format for `/metrics`.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0,
];

/// A latency histogram.
#[derive(Default)]
pub struct Histogram {
    counts: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_micros: AtomicU64,
}

impl Histogram {
    /// Counts one observation.
    pub fn observe(&self, duration: Duration) {
        let seconds = duration.as_secs_f64();
        if let Some(bucket) = BUCKETS.iter().position(|bound| seconds <= *bound) {
            self.counts[bucket].fetch_add(1, Ordering::Relaxed);
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        let micros = u64::try_from(duration.as_micros()).unwrap_or(u64::MAX);
        self.sum_micros.fetch_add(micros, Ordering::Relaxed);
    }

    fn render(&self, out: &mut String, name: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        let mut cumulative = 0;
        for (bound, count) in BUCKETS.iter().zip(&self.counts) {
            cumulative += count.load(Ordering::Relaxed);
            let _ = writeln!(out, "{name}_bucket{{le=\"{bound}\"}} {cumulative}");
        }
        let count = self.count.load(Ordering::Relaxed);
        let sum = self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {count}");
        let _ = writeln!(out, "{name}_sum {sum}\n{name}_count {count}");
    }
}

/// The kinds of error counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// A request refused as malformed or not allowed (4xx other than below).
    Refused,
    /// Too many requests from one address.
    RateLimited,
    /// The engine queue was full.
    QueueFull,
    /// Every visitor slot in memory was busy.
    VisitorsFull,
    /// Something failed on the server side (5xx).
    Internal,
    /// An engine crashed or stalled.
    Engine,
}

const ERROR_KINDS: [(ErrorKind, &str); 6] = [
    (ErrorKind::Refused, "refused"),
    (ErrorKind::RateLimited, "rate_limited"),
    (ErrorKind::QueueFull, "queue_full"),
    (ErrorKind::VisitorsFull, "visitors_full"),
    (ErrorKind::Internal, "internal"),
    (ErrorKind::Engine, "engine"),
];

/// Everything `/metrics` reports but the gauges read at scrape time.
#[derive(Default)]
pub struct Metrics {
    /// Requests answered.
    pub requests: AtomicU64,
    errors: [AtomicU64; ERROR_KINDS.len()],
    /// Engine moves played.
    pub engine_moves: AtomicU64,
    /// Microseconds the engines spent searching.
    pub engine_busy_micros: AtomicU64,
    /// From a move to the engine's reply being stored.
    pub move_latency: Histogram,
    /// From a search for a move being queued to an engine taking it.
    pub queue_wait: Histogram,
    /// From an analysis being queued to an engine taking it.
    pub analysis_queue_wait: Histogram,
    /// Analyses searched to their end.
    pub analyses: AtomicU64,
}

/// What is read when `/metrics` is asked for.
pub struct Gauges {
    /// Unfinished games in the database, unless the database failed.
    pub games_in_progress: Option<u64>,
    /// Searches for moves waiting for an engine.
    pub queue_length: usize,
    /// Analyses waiting for an engine.
    pub analysis_queue_length: usize,
    /// Visitors held in memory.
    pub visitors: usize,
    /// The most visitors held in memory.
    pub max_visitors: usize,
    /// Engines running.
    pub engines: usize,
    /// Engines searching now.
    pub engines_busy: usize,
}

impl Metrics {
    /// Counts one error.
    pub fn error(&self, kind: ErrorKind) {
        if let Some(index) = ERROR_KINDS.iter().position(|(k, _)| *k == kind) {
            self.errors[index].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The Prometheus text.
    pub fn render(&self, gauges: &Gauges) -> String {
        let mut out = String::new();
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed).to_string();
        let singles = [
            (
                "agon_games_in_progress",
                "gauge",
                "Unfinished games stored.",
                // Prometheus's value for a sample that could not be taken.
                gauges
                    .games_in_progress
                    .map_or_else(|| "NaN".into(), |games| games.to_string()),
            ),
            (
                "agon_queue_length",
                "gauge",
                "Searches for game moves waiting for an engine.",
                gauges.queue_length.to_string(),
            ),
            (
                "agon_analysis_queue_length",
                "gauge",
                "Analyses waiting for an engine (after every game move).",
                gauges.analysis_queue_length.to_string(),
            ),
            (
                "agon_visitors_in_memory",
                "gauge",
                "Visitors held in memory.",
                gauges.visitors.to_string(),
            ),
            (
                "agon_visitors_max",
                "gauge",
                "The most visitors held in memory (--max-visitors).",
                gauges.max_visitors.to_string(),
            ),
            (
                "agon_engines",
                "gauge",
                "Engine processes running.",
                gauges.engines.to_string(),
            ),
            (
                "agon_engines_busy",
                "gauge",
                "Engine processes searching now.",
                gauges.engines_busy.to_string(),
            ),
            (
                "agon_requests_total",
                "counter",
                "HTTP requests answered.",
                load(&self.requests),
            ),
            (
                "agon_engine_moves_total",
                "counter",
                "Moves the engines played.",
                load(&self.engine_moves),
            ),
            (
                "agon_analyses_total",
                "counter",
                "Analyses the engines searched to their end.",
                load(&self.analyses),
            ),
            (
                "agon_engine_busy_seconds_total",
                "counter",
                "Time the engines spent searching.",
                (self.engine_busy_micros.load(Ordering::Relaxed) as f64 / 1e6).to_string(),
            ),
        ];
        for (name, kind, help, value) in singles {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
            );
        }
        let _ = writeln!(
            out,
            "# HELP agon_errors_total Errors by kind.\n# TYPE agon_errors_total counter"
        );
        for ((_, name), count) in ERROR_KINDS.iter().zip(&self.errors) {
            let _ = writeln!(
                out,
                "agon_errors_total{{kind=\"{name}\"}} {}",
                count.load(Ordering::Relaxed)
            );
        }
        self.move_latency.render(
            &mut out,
            "agon_move_latency_seconds",
            "From a visitor's move to the engine's reply being stored.",
        );
        self.queue_wait.render(
            &mut out,
            "agon_queue_wait_seconds",
            "From an engine search for a move being queued to an engine taking it.",
        );
        self.analysis_queue_wait.render(
            &mut out,
            "agon_analysis_queue_wait_seconds",
            "From an analysis being queued to an engine taking it.",
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_are_cumulative_and_count_everything() {
        let metrics = Metrics::default();
        metrics.move_latency.observe(Duration::from_millis(3));
        metrics.move_latency.observe(Duration::from_millis(300));
        metrics.move_latency.observe(Duration::from_secs(1000));
        metrics.error(ErrorKind::QueueFull);
        let mut gauges = Gauges {
            games_in_progress: Some(2),
            queue_length: 1,
            analysis_queue_length: 0,
            visitors: 3,
            max_visitors: 10,
            engines: 2,
            engines_busy: 1,
        };
        let text = metrics.render(&gauges);
        assert!(text.contains("agon_move_latency_seconds_bucket{le=\"0.005\"} 1\n"));
        assert!(text.contains("agon_move_latency_seconds_bucket{le=\"0.5\"} 2\n"));
        assert!(text.contains("agon_move_latency_seconds_bucket{le=\"+Inf\"} 3\n"));
        assert!(text.contains("agon_errors_total{kind=\"queue_full\"} 1\n"));
        assert!(text.contains("agon_games_in_progress 2\n"));
        gauges.games_in_progress = None;
        let text = metrics.render(&gauges);
        assert!(text.contains("agon_games_in_progress NaN\n"));
        assert!(text.contains("agon_engines 2\n"));
    }
}
