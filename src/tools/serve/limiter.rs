//! What one client address may take: requests, limited by a token bucket
//! for each address (a burst of twice the rate, refilled at the rate), and
//! open event streams, limited by a count.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Addresses not seen for this long are forgotten.
const FORGET_AFTER: Duration = Duration::from_secs(60);

struct Bucket {
    tokens: f64,
    since: Instant,
}

/// The buckets of every address seen lately.
pub struct RateLimiter {
    per_second: f64,
    burst: f64,
    buckets: Mutex<HashMap<IpAddr, Bucket>>,
}

impl RateLimiter {
    /// At most `per_second` requests a second from one address, in bursts of twice that.
    pub fn new(per_second: u32) -> RateLimiter {
        let per_second = f64::from(per_second.max(1));
        RateLimiter {
            per_second,
            burst: per_second * 2.0,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes a token of `address`; `Err` with how long to wait when there is none.
    pub fn take(&self, address: IpAddr) -> Result<(), Duration> {
        let now = Instant::now();
        let mut buckets = self
            .buckets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let bucket = buckets.entry(address).or_insert(Bucket {
            tokens: self.burst,
            since: now,
        });
        let refill = now.duration_since(bucket.since).as_secs_f64() * self.per_second;
        bucket.tokens = (bucket.tokens + refill).min(self.burst);
        bucket.since = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64(
                (1.0 - bucket.tokens) / self.per_second,
            ))
        }
    }

    /// Forgets the addresses idle for a while (called on a timer).
    pub fn forget_idle(&self) {
        self.buckets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .retain(|_, bucket| bucket.since.elapsed() < FORGET_AFTER);
    }
}

/// The open event streams of every address. An open stream keeps its
/// visitor in memory, so one address (with as many cookies as it likes)
/// must not hold every visitor slot.
pub struct StreamLimiter {
    per_address: usize,
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

/// One open stream of an address: the count goes down when it is dropped.
pub struct StreamSlot {
    address: IpAddr,
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

fn counts(open: &Mutex<HashMap<IpAddr, usize>>) -> MutexGuard<'_, HashMap<IpAddr, usize>> {
    open.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl StreamLimiter {
    /// At most `per_address` streams open at once from one address.
    pub fn new(per_address: usize) -> StreamLimiter {
        StreamLimiter {
            per_address,
            open: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// The most streams one address may hold open.
    pub fn per_address(&self) -> usize {
        self.per_address
    }

    /// A slot for one more stream of `address`, if it has one left.
    pub fn open(&self, address: IpAddr) -> Option<StreamSlot> {
        let mut open = counts(&self.open);
        let count = open.entry(address).or_insert(0);
        if *count >= self.per_address {
            return None;
        }
        *count += 1;
        Some(StreamSlot {
            address,
            open: Arc::clone(&self.open),
        })
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut open = counts(&self.open);
        if let Some(count) = open.get_mut(&self.address) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                open.remove(&self.address);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_counted_per_address_and_freed_when_dropped() {
        let streams = StreamLimiter::new(2);
        let one: IpAddr = "192.0.2.1".parse().unwrap();
        let other: IpAddr = "192.0.2.2".parse().unwrap();
        let first = streams.open(one).unwrap();
        let _second = streams.open(one).unwrap();
        assert!(streams.open(one).is_none());
        assert!(streams.open(other).is_some());
        drop(first);
        assert!(streams.open(one).is_some());
    }

    #[test]
    fn a_burst_passes_then_the_rate_holds_per_address() {
        let limiter = RateLimiter::new(5);
        let one: IpAddr = "192.0.2.1".parse().unwrap();
        let other: IpAddr = "192.0.2.2".parse().unwrap();
        for _ in 0..10 {
            assert!(limiter.take(one).is_ok());
        }
        let wait = limiter.take(one).unwrap_err();
        assert!(wait > Duration::ZERO && wait <= Duration::from_millis(200));
        assert!(limiter.take(other).is_ok());
    }
}
