//! A corpus of invalid FENs and move strings: each is refused with the right
//! message, and none panics.

use agon::rules::{START_FEN, parse_fen, parse_move};

const START_BOARD: &str = "q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q";

/// (FEN, a fragment the error message must contain)
const BAD_FENS: &[(&str, &str)] = &[
    ("", "empty FEN"),
    ("   ", "empty FEN"),
    ("q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q", "1 fields"),
    (
        "q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q w 1 extra",
        "4 fields",
    ),
    (
        "q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q  w",
        "single spaces",
    ),
    (
        " q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q w",
        "single spaces",
    ),
    (
        "q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q x",
        "side to move 'x'",
    ),
    (
        "q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q W",
        "side to move 'W'",
    ),
    (
        "q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q w 0",
        "move number '0'",
    ),
    (
        "q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q w -3",
        "move number '-3'",
    ),
    (
        "q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q w +3",
        "move number '+3'",
    ),
    (
        "q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q w 99999999999",
        "move number '99999999999' is not a whole number from 1 to 4294967295",
    ),
    // The whole rank is counted, not only up to its first cell too many.
    (
        "q1G1g1/6G/G7/9/g8g/GGGGGGGGGGGGGGGGGGG/G8G/9/7g/g6/1G1g1Q w",
        "rank 6 describes 19 cells; it has 11",
    ),
    (
        "q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1QGG2 w",
        "rank 1 describes 10 cells; it has 6",
    ),
    ("q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6 w", "10 ranks"),
    ("q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q/6 w", "12 ranks"),
    (
        "q1G1g/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q w",
        "rank 11 describes 5 cells; it has 6",
    ),
    (
        "q1G1g2/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q w",
        "rank 11 describes 7 cells",
    ),
    (
        "q1G1g1/6G/G7/9/g8g/10/G8G/9/7g/g6/1G1g1Q w",
        "rank 6 describes 10 cells; it has 11",
    ),
    (
        "q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1QG w",
        "rank 1 describes 7 cells",
    ),
    (
        "q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1X w",
        "unknown character 'X' in rank 1",
    ),
    (
        "q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1k1Q w",
        "unknown character 'k'",
    ),
    (
        "q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Qé w",
        "unknown character 'é'",
    ),
    (
        "*q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q w",
        "'*' in rank 11",
    ),
    (
        "q**1G1g/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q w",
        "'*' in rank 11",
    ),
    (
        "q1G1g1/6G/G7/9/g8g/011/G8G/9/7g/g6/1G1g1Q w",
        "empty-cell count '011'",
    ),
    (
        "q1G1g1/6G/G7/9/g8g/0/G8G/9/7g/g6/1G1g1Q w",
        "empty-cell count '0'",
    ),
    (
        "q1G1g1/6G/G7/9/g8g/12/G8G/9/7g/g6/1G1g1Q w",
        "empty-cell count '12'",
    ),
    (
        "q1G1g1/6G/G7/9/g8g/99999999999999/G8G/9/7g/g6/1G1g1Q w",
        "empty-cell count",
    ),
    (
        "q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1q w",
        "black has more than one queen",
    ),
    (
        "q1G1g1/6G/G7/9/g8g/5Q5/G8G/9/7g/g6/1G1g1Q w",
        "white has more than one queen",
    ),
    (
        "q1G1g1/6G/G7/9/g8g/5G5/G8G/9/7g/g6/1G1g1Q w",
        "white has 7 guards",
    ),
    (
        "q1G1g1/6G/G7/9/g8g/4ggg4/G8G/9/7g/g6/1G1g1Q w",
        "black has 9 guards",
    ),
    (
        "6/7/8/9/10/5G5/10/9/8/7/6 w",
        "a guard stands on the throne",
    ),
    (
        "6/7/8/9/10/5g*5/10/9/8/7/6 b",
        "a guard stands on the throne",
    ),
    ("q1G1g1/6G/G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q/ w", "12 ranks"),
    (
        "q1G1g1//G7/9/g8g/11/G8G/9/7g/g6/1G1g1Q w",
        "rank 10 describes 0 cells",
    ),
];

/// (move, a fragment the error message must contain), from the start position.
const BAD_MOVES: &[(&str, &str)] = &[
    ("", "not a move"),
    ("f1", "not a move"),
    ("f1f", "not a move"),
    ("F1F2", "not a move"),
    ("f1-f2", "not a move"),
    ("f1 f2", "not a move"),
    ("f1f2f3", "not a move"),
    ("z1f2", "not a move"),
    ("f0f1", "not a move"),
    ("f01f2", "not a move"),
    ("a11a10", "cell 'a11' is not on the board"),
    ("f1k1", "cell 'k1' is not on the board"),
    ("f12f11", "cell 'f12' is not on the board"),
    ("ф1f2", "not a move"),
    ("f6f7", "there is no piece on f6"),
    ("f11f10", "the piece on f11 is black's"),
    ("f1b1", "b1 is occupied"),
    ("f1f3", "f3 is not next to f1"),
    ("b1b2b", "not a move"),
    ("a5a4a", "not a move"),
];

#[test]
fn every_bad_fen_is_refused_with_its_reason() {
    for (fen, fragment) in BAD_FENS {
        match parse_fen(fen) {
            Ok(position) => panic!("accepted {fen:?} as {position:?}"),
            Err(error) => {
                let message = error.to_string();
                assert!(
                    message.contains(fragment),
                    "{fen:?}: got {message:?}, want {fragment:?}"
                );
            }
        }
    }
    assert!(BAD_FENS.len() >= 30);
}

#[test]
fn every_bad_move_is_refused_with_its_reason() {
    let start = parse_fen(START_FEN).unwrap();
    for (text, fragment) in BAD_MOVES {
        let message = parse_move(&start, text).expect_err(text).to_string();
        assert!(
            message.contains(fragment),
            "{text:?}: got {message:?}, want {fragment:?}"
        );
    }
}

#[test]
fn rule_breaking_moves_name_the_rule() {
    let cases: &[(&str, &str, &str)] = &[
        // A guard may not enter the throne, and a step never goes outward.
        (
            "6/7/8/9/4G5/11/10/9/8/7/Q5 w",
            "f7f6",
            "only a queen may enter the throne",
        ),
        ("6/7/8/9/4G5/11/10/9/8/7/Q5 w", "f7f8", "may not go outward"),
        // The queen on the throne never steps off it.
        ("6/7/8/9/10/5Q5/10/9/8/7/q5 w", "f6f7", "never steps off"),
        // A captured piece must be relocated before anything else moves.
        (
            "6/7/8/9/10/11/10/9/8/7/QG*4 w",
            "a1a2",
            "must be relocated first",
        ),
        ("6/7/8/9/10/11/10/9/8/7/QG*4 w", "b1c2", "outer ring"),
        (
            "6/7/8/9/10/11/10/9/8/7/Q*G*4 w",
            "b1a2",
            "queen must be relocated before any guard",
        ),
        // No move may end between two active enemies.
        (
            "6/7/8/9/10/4G*6/10/9/8/7/g1g2Q w",
            "e6b1",
            "between two active enemy pieces",
        ),
        // Nothing moves once a formation has decided the game.
        (
            "6/7/8/9/4GG4/4GQG4/4GG4/9/g7/g6/qgggg1 b",
            "a1b1",
            "already decided by a formation (white wins by formation)",
        ),
    ];
    for (fen, text, fragment) in cases {
        let position = parse_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
        let message = parse_move(&position, text).expect_err(text).to_string();
        assert!(
            message.contains(fragment),
            "{fen} {text}: got {message:?}, want {fragment:?}"
        );
    }
}

#[test]
fn start_board_variants_still_parse() {
    for side in ["w", "b", "w 1", "b 17"] {
        let fen = format!("{START_BOARD} {side}");
        assert!(parse_fen(&fen).is_ok(), "{fen}");
    }
}
