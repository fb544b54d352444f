//! The error function and its complement, to full double precision.

use std::f64::consts::{FRAC_2_SQRT_PI, PI};

/// Below this argument the power series is used; above it the continued fraction converges quickly.
pub(super) const ERF_SERIES_LIMIT: f64 = 2.5;

/// Past this argument erfc underflows to zero in f64 and the continued fraction would produce inf * 0.
pub(super) const ERFC_ZERO_BEYOND: f64 = 28.0;

/// The error function, accurate to about 1e-15 over the whole real line.
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    let magnitude = if a < ERF_SERIES_LIMIT {
        erf_series(a)
    } else {
        1.0 - erfc_fraction(a)
    };
    magnitude.copysign(x)
}

/// The complementary error function 1 - erf(x), with full relative precision for large positive x.
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        x
    } else if x < 0.0 {
        2.0 - erfc(-x)
    } else if x < ERF_SERIES_LIMIT {
        1.0 - erf_series(x)
    } else {
        erfc_fraction(x)
    }
}

/// erf(x) for 0 <= x < ERF_SERIES_LIMIT.
///
/// Uses erf x = 2/sqrt(pi) * exp(-x^2) * sum_n (2x^2)^n x / (1*3*...*(2n+1)): unlike the plain Taylor
/// series every term is positive, so nothing cancels and the sum keeps full precision.
pub(super) fn erf_series(x: f64) -> f64 {
    let two_x2 = 2.0 * x * x;
    let mut term = x;
    let mut sum = x;
    let mut odd = 1.0;
    // The terms eventually shrink geometrically (and underflow to 0), so this always stops.
    while term > sum * 1e-17 {
        odd += 2.0;
        term *= two_x2 / odd;
        sum += term;
    }
    FRAC_2_SQRT_PI * (-x * x).exp() * sum
}

/// erfc(x) for x >= ERF_SERIES_LIMIT.
///
/// Evaluates sqrt(pi) * exp(x^2) * erfc(x) = 1 / (x + (1/2) / (x + 1 / (x + (3/2) / (x + ...)))) with the
/// modified Lentz algorithm; the partial numerators are k/2.
pub(super) fn erfc_fraction(x: f64) -> f64 {
    // Lentz's guard against a vanishing intermediate denominator.
    const TINY: f64 = 1e-300;
    if x >= ERFC_ZERO_BEYOND {
        return 0.0;
    }
    let mut denominator = x;
    let mut c = x;
    let mut d = 0.0;
    for k in 1..1000u32 {
        let a = f64::from(k) / 2.0;
        d = x + a * d;
        if d == 0.0 {
            d = TINY;
        }
        d = 1.0 / d;
        c = x + a / c;
        if c == 0.0 {
            c = TINY;
        }
        let delta = c * d;
        denominator *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    (-x * x).exp() / (denominator * PI.sqrt())
}
