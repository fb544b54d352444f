//! Statistics checked against values computed independently from the definitions.

use super::elo::*;
use super::erf::*;
use super::outcome::*;
use super::sprt::*;
use super::summary::*;
use super::tally::*;

/// Relative comparison (absolute near zero) so that a wrong formula fails loudly.
fn assert_close(actual: f64, expected: f64, rel: f64) {
    let scale = expected.abs().max(1e-300);
    assert!(
        (actual - expected).abs() <= rel * scale || (actual - expected).abs() < 1e-300,
        "actual {actual:e} differs from expected {expected:e} (rel tol {rel:e})"
    );
}

/// 120 wins, 80 draws, 100 losses as single games.
fn trinomial_sample() -> Tally {
    Tally {
        wins: 120,
        draws: 80,
        losses: 100,
        ..Tally::default()
    }
}

/// 225 pairs: 12 LL, 45 LD, 30 WL, 60 DD, 58 WD, 20 WW, built through `add_pair`.
fn pentanomial_sample() -> Tally {
    use GameOutcome::{Draw, Loss, Win};
    let mut tally = Tally::new();
    let groups = [
        (Loss, Loss, 12),
        (Draw, Loss, 45),
        (Loss, Win, 30),
        (Draw, Draw, 60),
        (Win, Draw, 58),
        (Win, Win, 20),
    ];
    for (first, second, count) in groups {
        for _ in 0..count {
            tally.add_pair(first, second);
        }
    }
    tally
}

fn normalized(elo0: f64, elo1: f64) -> SprtConfig {
    SprtConfig::new(elo0, elo1, 0.05, 0.05, SprtModel::Normalized).unwrap()
}

#[test]
fn erf_matches_python() {
    // python3 -c "import math; print([math.erf(x) for x in (1e-5, .1, .5, 1, 1.5, 2, 2.49, 2.5, 2.51, 3, 4, 5.5)])"
    let cases = [
        (1e-5, 1.1283791670579e-05),
        (0.1, 0.1124629160182849),
        (0.5, 0.5204998778130465),
        (1.0, 0.8427007929497149),
        (1.5, 0.9661051464753108),
        (2.0, 0.9953222650189527),
        (2.49, 0.9995707121322661),
        (2.5, 0.999593047982555),
        (2.51, 0.9996142945182758),
        (3.0, 0.9999779095030014),
        (4.0, 0.9999999845827421),
        (5.5, 0.9999999999999927),
    ];
    for (x, expected) in cases {
        assert_close(erf(x), expected, 1e-13);
        assert_close(erf(-x), -expected, 1e-13);
    }
    assert_eq!(erf(0.0), 0.0);
    assert_eq!(erf(f64::INFINITY), 1.0);
    assert_eq!(erf(f64::NEG_INFINITY), -1.0);
}

#[test]
fn erfc_keeps_relative_precision_in_the_tail() {
    // python3 -c "import math; print([math.erfc(x) for x in (.5, 2, 2.49, 2.5, 3, 4, 5.5, 6, 10, -1.3)])"
    let cases = [
        (0.5, 0.4795001221869535),
        (2.0, 0.004677734981047265),
        (2.49, 0.000429287867733913),
        (2.5, 0.0004069520174449589),
        (3.0, 2.2090496998585438e-05),
        (4.0, 1.541725790028002e-08),
        (5.5, 7.357847917974398e-15),
        (6.0, 2.1519736712498916e-17),
        (10.0, 2.088487583762545e-45),
        (-1.3, 1.9340079449406524),
    ];
    for (x, expected) in cases {
        // Just below the series limit, 1 - erf loses a few digits; 1e-11 is still far below 1e-6.
        assert_close(erfc(x), expected, 1e-11);
    }
    assert_eq!(erfc(40.0), 0.0);
    assert_eq!(erfc(f64::INFINITY), 0.0);
    assert_eq!(erfc(f64::NEG_INFINITY), 2.0);
}

#[test]
fn trinomial_elo_and_error_bar() {
    let t = trinomial_sample();
    // python3: s=160/300; -400*math.log10(1/s-1)
    let elo = t.elo_trinomial();
    assert_close(elo.value, 23.196778791074703, 1e-9);
    // python3: s=160/300; v=(120*(1-s)**2+80*(.5-s)**2+100*s**2)/300; se=(v/300)**.5; Z=1.959963984540054
    //          e=lambda s:-400*math.log10(1/s-1); (e(s+Z*se)-e(s-Z*se))/2
    assert_close(elo.error, 33.82316272109269, 1e-9);
    // Without pairs the reported Elo is the trinomial one.
    assert_eq!(t.elo(), elo);
}

#[test]
fn trinomial_nelo() {
    let t = trinomial_sample();
    let nelo = t.nelo_trinomial();
    // python3: s=160/300; v=(120*(1-s)**2+80*(.5-s)**2+100*s**2)/300; (s-.5)/v**.5*800/math.log(10)
    assert_close(nelo.value, 27.130161202517584, 1e-9);
    // python3: 1.959963984540054*800/math.log(10)/300**.5
    assert_close(nelo.error, 39.31531520877775, 1e-9);
}

#[test]
fn los_matches_python() {
    // python3: 0.5*(1+math.erf((120-100)/math.sqrt(2*220)))
    assert_close(trinomial_sample().los(), 0.9112350737939232, 1e-12);
    // python3: 0.5*(1+math.erf((30-45)/math.sqrt(2*75)))
    assert_close(los(30, 45), 0.041632258331775196, 1e-12);
    // python3: 0.5*(1+math.erf((128-99)/math.sqrt(2*227)))
    assert_close(pentanomial_sample().los(), 0.9728726580382732, 1e-12);
    assert_eq!(los(0, 0), 0.5);
    assert_eq!(los(1_000_000, 0), 1.0);
    assert!(los(0, 1_000_000) >= 0.0);
}

#[test]
fn add_pair_fills_every_counter() {
    let t = pentanomial_sample();
    assert_eq!((t.wins, t.draws, t.losses), (128, 223, 99));
    assert_eq!(t.ptnml, [12, 45, 90, 58, 20]);
    assert_eq!((t.wl_pairs, t.dd_pairs()), (30, 60));
    assert_eq!((t.games(), t.pairs()), (450, 225));
    assert_close(t.points(), 239.5, 1e-15);
    assert_close(t.score(), 239.5 / 450.0, 1e-15);
    assert_close(t.draw_ratio(), 223.0 / 450.0, 1e-15);
    assert_close(t.pair_draw_ratio(), 0.4, 1e-15);
    assert_close(t.pairs_ratio().unwrap(), 78.0 / 57.0, 1e-15);
    assert_close(t.wl_dd_ratio().unwrap(), 0.5, 1e-15);

    let mut doubled = t;
    doubled.merge(&t);
    assert_eq!(doubled.ptnml, [24, 90, 180, 116, 40]);
    assert_eq!((doubled.games(), doubled.wl_pairs), (900, 60));
}

#[test]
fn outcome_helpers() {
    use GameOutcome::{Draw, Loss, Win};
    assert_eq!(Win.flipped(), Loss);
    assert_eq!(Draw.flipped(), Draw);
    assert_eq!(Loss.points(), 0.0);
    assert_eq!(Draw.points(), 0.5);
    assert_eq!(PairOutcome::from_games(Win, Loss), PairOutcome::WinLoss);
    assert_eq!(PairOutcome::from_games(Loss, Win), PairOutcome::WinLoss);
    assert_eq!(PairOutcome::from_games(Draw, Draw), PairOutcome::DrawDraw);
    assert_eq!(PairOutcome::from_games(Draw, Win), PairOutcome::WinDraw);
    assert_eq!(PairOutcome::from_games(Loss, Draw).bucket(), 1);
    assert_eq!(PairOutcome::from_games(Win, Win).points(), 2.0);
    assert_eq!(
        PairOutcome::DrawDraw.bucket(),
        PairOutcome::WinLoss.bucket()
    );
}

#[test]
fn pentanomial_elo_and_nelo() {
    let t = pentanomial_sample();
    // python3: P=[12,45,90,58,20]; x=[0,.25,.5,.75,1]; N=225; mu=sum(c*v for c,v in zip(P,x))/N
    //          vp=sum(c*(v-mu)**2 for c,v in zip(P,x))/N; se=(vp/N)**.5; Z=1.959963984540054
    //          e=lambda s:-400*math.log10(1/s-1)
    let elo = t.elo_pentanomial().unwrap();
    // python3: e(mu)
    assert_close(elo.value, 22.421367031557992, 1e-9);
    // python3: (e(mu+Z*se)-e(mu-Z*se))/2
    assert_close(elo.error, 22.94136909145277, 1e-9);
    let nelo = t.nelo_pentanomial().unwrap();
    // python3: (mu-.5)/math.sqrt(2*vp)*800/math.log(10)
    assert_close(nelo.value, 31.50666351568373, 1e-9);
    // python3: Z*800/math.log(10)/math.sqrt(2*N)
    assert_close(nelo.error, 32.10082044606286, 1e-9);
    // With pairs the reported figures are the pentanomial ones.
    assert_eq!(t.elo(), elo);
    assert_eq!(t.nelo(), nelo);
    assert!(trinomial_sample().elo_pentanomial().is_none());
}

#[test]
fn sprt_bounds() {
    let config = normalized(0.0, 5.0);
    // python3: math.log(0.05/0.95), math.log(0.95/0.05)
    assert_close(config.lower_bound(), -2.9444389791664403, 1e-12);
    assert_close(config.upper_bound(), 2.9444389791664403, 1e-12);
}

// Reference LLR in python3 (normal-approximation GSPRT, empty buckets weighted 1e-3):
//   K=800/math.log(10)
//   def llr(P,x,g,e0,e1,norm=True):
//       R=[c if c>0 else 1e-3 for c in P]; T=sum(R); N=sum(P)
//       mu=sum(c*v for c,v in zip(R,x))/T; var=sum(c*(v-mu)**2 for c,v in zip(R,x))/T
//       sg=math.sqrt(g*var)
//       m0,m1=(0.5+e0/K*sg,0.5+e1/K*sg) if norm else (1/(1+10**(-e0/400)),1/(1+10**(-e1/400)))
//       return N*(m1-m0)*(2*mu-m0-m1)/(2*var)
//   x=[0,.25,.5,.75,1]

#[test]
fn pentanomial_llr() {
    let t = pentanomial_sample();
    // python3: llr([12,45,90,58,20],x,2,0,5)
    assert_close(normalized(0.0, 5.0).llr(&t), 0.5406692852991338, 1e-9);
    assert_close(
        llr_pentanomial(&t.ptnml, 0.0, 5.0, SprtModel::Normalized),
        0.5406692852991338,
        1e-9,
    );
    // python3: llr([12,45,90,58,20],x,2,0,5,norm=False)
    assert_close(
        llr_pentanomial(&t.ptnml, 0.0, 5.0, SprtModel::Logistic),
        0.7340643977297098,
        1e-9,
    );
    let status = normalized(0.0, 5.0).status(&t);
    assert_eq!(status.decision, None);
    // python3: llr([12,45,90,58,20],x,2,0,5)/math.log(0.95/0.05)*100
    assert_close(
        status.bound_percentage(),
        0.5406692852991338 / 2.9444389791664403 * 100.0,
        1e-9,
    );
}

#[test]
fn trinomial_llr() {
    let t = trinomial_sample();
    // python3: llr([100,80,120],[0,.5,1],1,0,10,norm=False)
    let logistic = SprtConfig::new(0.0, 10.0, 0.05, 0.05, SprtModel::Logistic).unwrap();
    assert_close(logistic.llr(&t), 0.6191516053867636, 1e-9);
    // python3: llr([100,80,120],[0,.5,1],1,0,5)
    assert_close(
        llr_trinomial(120, 80, 100, 0.0, 5.0, SprtModel::Normalized),
        0.30606235579782554,
        1e-9,
    );
}

#[test]
fn sprt_decides_at_both_ends() {
    let config = normalized(0.0, 5.0);
    let strong = Tally {
        ptnml: [10, 80, 200, 160, 60],
        ..Tally::default()
    };
    let status = config.status(&strong);
    // python3: llr([10,80,200,160,60],x,2,0,5)
    assert_close(status.llr, 3.7666129514408495, 1e-9);
    assert_eq!(status.decision, Some(SprtDecision::H1Accepted));
    assert!(status.bound_percentage() > 100.0);

    let weak = Tally {
        ptnml: [60, 160, 200, 80, 10],
        ..Tally::default()
    };
    let status = config.status(&weak);
    // python3: llr([60,160,200,80,10],x,2,0,5)
    assert_close(status.llr, -3.9778604542802225, 1e-9);
    assert_eq!(status.decision, Some(SprtDecision::H0Accepted));
    // python3: -3.9778604542802225/math.log(0.05/0.95)*100
    assert_close(status.bound_percentage(), 135.09739826248125, 1e-9);
}

#[test]
fn sprt_config_is_validated() {
    let refusal = |elo0, elo1, alpha, beta| {
        SprtConfig::new(elo0, elo1, alpha, beta, SprtModel::Normalized).unwrap_err()
    };
    assert!(matches!(
        refusal(5.0, 0.0, 0.05, 0.05),
        SprtError::Bounds { .. }
    ));
    assert!(matches!(
        refusal(0.0, 5.0, 0.0, 0.05),
        SprtError::Probability { .. }
    ));
    assert!(matches!(
        refusal(0.0, 5.0, 0.05, 1.0),
        SprtError::Probability { .. }
    ));
    assert!(matches!(
        refusal(0.0, 5.0, 0.6, 0.5),
        SprtError::ErrorSum { .. }
    ));
    assert!(matches!(
        refusal(f64::NAN, 5.0, 0.05, 0.05),
        SprtError::Bounds { .. }
    ));
}

#[test]
fn empty_tally_is_harmless() {
    let t = Tally::new();
    assert_eq!(t.elo(), Estimate::NO_DATA);
    assert_eq!(t.nelo(), Estimate::NO_DATA);
    assert_eq!(t.score(), 0.5);
    assert_eq!(t.los(), 0.5);
    assert_eq!(t.pairs_ratio(), None);
    let status = normalized(0.0, 5.0).status(&t);
    assert_eq!((status.llr, status.decision), (0.0, None));
    assert_eq!(status.bound_percentage(), 0.0);
    let lines = summary_lines(&t, Some(&normalized(0.0, 5.0)));
    assert_eq!(
        lines,
        [
            "Elo: 0.00 +/- inf, nElo: 0.00 +/- inf",
            "LOS: 50.00 %, DrawRatio: 0.00 %",
            "Games: 0, Wins: 0, Losses: 0, Draws: 0, Points: 0.0 (0.00 %)",
            "LLR: 0.00 (0.0%) (-2.94, 2.94) [0.00, 5.00]",
        ]
    );
}

#[test]
fn all_wins_give_infinite_elo() {
    let mut t = Tally::new();
    for _ in 0..10 {
        t.add_pair(GameOutcome::Win, GameOutcome::Win);
    }
    let elo = t.elo();
    assert_eq!((elo.value, elo.error), (f64::INFINITY, f64::INFINITY));
    assert_eq!(t.nelo().value, f64::INFINITY);
    assert!(t.nelo().error.is_finite());
    let trinomial = t.elo_trinomial();
    assert_eq!(
        (trinomial.value, trinomial.error),
        (f64::INFINITY, f64::INFINITY)
    );
    let llr = normalized(0.0, 5.0).llr(&t);
    assert!(llr.is_finite() && llr > 0.0);
    let lines = summary_lines(&t, Some(&normalized(0.0, 5.0)));
    assert!(
        lines[0].starts_with("Elo: inf +/- inf, nElo: inf +/- "),
        "{}",
        lines[0]
    );
    assert_eq!(
        lines[1],
        "LOS: 100.00 %, DrawRatio: 0.00 %, PairsRatio: inf"
    );
    assert_eq!(lines[3], "Ptnml(0-2): [0, 0, 0, 0, 10], WL/DD Ratio: n/a");
    assert!(
        lines
            .iter()
            .all(|l| !l.contains("NaN") && !l.contains("n/a %"))
    );

    let losses = Tally {
        losses: 7,
        ..Tally::default()
    };
    assert_eq!(losses.elo().value, f64::NEG_INFINITY);
    assert_eq!(losses.nelo().value, f64::NEG_INFINITY);
    assert!(summary_lines(&losses, None)[0].starts_with("Elo: -inf +/- inf"));
}

#[test]
fn zero_variance_draws() {
    let mut t = Tally::new();
    for _ in 0..50 {
        t.add_pair(GameOutcome::Draw, GameOutcome::Draw);
    }
    let elo = t.elo();
    assert_eq!((elo.value, elo.error), (0.0, 0.0));
    assert_eq!(t.nelo().value, 0.0);
    // python3: 1.959963984540054*800/math.log(10)/math.sqrt(100)
    assert_close(t.nelo().error, 68.09612345718845, 1e-9);
    // python3: llr([0,0,50,0,0],x,2,0,5)
    assert_close(normalized(0.0, 5.0).llr(&t), -0.010355269747003506, 1e-9);
    let lines = summary_lines(&t, None);
    assert_eq!(lines[0], "Elo: 0.00 +/- 0.00, nElo: 0.00 +/- 68.10");
    assert_eq!(lines[3], "Ptnml(0-2): [0, 0, 50, 0, 0], WL/DD Ratio: 0.00");
}

#[test]
fn summary_matches_fastchess_layout() {
    let t = pentanomial_sample();
    let lines = summary_lines(&t, Some(&normalized(0.0, 5.0)));
    // Expected text printed by python3 with the same formulas and f-string formatting.
    assert_eq!(
        lines,
        [
            "Elo: 22.42 +/- 22.94, nElo: 31.51 +/- 32.10",
            "LOS: 97.29 %, DrawRatio: 40.00 %, PairsRatio: 1.37",
            "Games: 450, Wins: 128, Losses: 99, Draws: 223, Points: 239.5 (53.22 %)",
            "Ptnml(0-2): [12, 45, 90, 58, 20], WL/DD Ratio: 0.50",
            "LLR: 0.54 (18.4%) (-2.94, 2.94) [0.00, 5.00]",
        ]
    );

    let logistic = SprtConfig::new(0.0, 10.0, 0.05, 0.05, SprtModel::Logistic).unwrap();
    let lines = summary_lines(&trinomial_sample(), Some(&logistic));
    assert_eq!(
        lines,
        [
            "Elo: 23.20 +/- 33.82, nElo: 27.13 +/- 39.32",
            "LOS: 91.12 %, DrawRatio: 26.67 %",
            "Games: 300, Wins: 120, Losses: 100, Draws: 80, Points: 160.0 (53.33 %)",
            "LLR: 0.62 (21.0%) (-2.94, 2.94) [0.00, 10.00]",
        ]
    );
}

#[test]
fn elo_score_round_trip() {
    // python3: -400*math.log10(1/0.75-1)
    assert_close(score_to_elo(0.75), 190.848501887865, 1e-12);
    assert_close(elo_to_score(190.848501887865), 0.75, 1e-12);
    assert_eq!(score_to_elo(0.5).to_bits(), 0.0f64.to_bits());
    assert_eq!(score_to_elo(0.0), f64::NEG_INFINITY);
    assert_eq!(score_to_elo(1.0), f64::INFINITY);
    assert_eq!(fixed(-0.001, 2), "0.00");
    assert_eq!(fixed(-0.01, 2), "-0.01");
}
