//! The learned evaluation (NNUE): piece kind and cell inputs seen from each
//! side, one hidden layer kept up to date incrementally as the search makes
//! moves, integer inference. The network file format is in protocol.md
//! ("Network files").

pub mod simd;
mod stack;

use crate::rules::dense::{dense, turned};
use crate::rules::geometry::{CELL_COUNT, NEAR_THRONE};
use crate::rules::notation::Quoted;
use crate::rules::{Cell, Color, Kind, Piece, Position};
use simd::{Level, Pending};
pub use stack::AccumulatorStack;
use std::sync::OnceLock;

/// Piece kinds seen from one side: own or enemy, queen or guard, active or
/// captured.
pub const KINDS: usize = 8;
/// Inputs of one side's view: a kind on a cell.
pub const INPUTS: usize = KINDS * CELL_COUNT;
/// Hidden units of one side's view.
pub const HIDDEN: usize = 128;
/// The activation scale: a hidden unit's value 1.0 is stored as this.
pub const QA: i32 = 255;
/// The output weight scale: an output weight 1.0 is stored as this.
pub const QB: i32 = 512;
/// Centi-guards per unit of the network's output (the output passed
/// through a sigmoid is the expected score).
pub const SCALE: i32 = 400;
/// Output buckets: the output layer has one set of weights and a bias for
/// each, and a position is scored by its bucket's ([`bucket`]).
pub const BUCKETS: usize = 8;
/// The first bytes of a network file.
const MAGIC: &[u8; 8] = b"AGONNUE2";
/// The first bytes of a network file of the first format: one output, no
/// bucket count in the header.
const MAGIC_V1: &[u8; 8] = b"AGONNUE1";
/// Bytes before the weights: magic, inputs, hidden units, buckets.
pub const HEADER: usize = MAGIC.len() + 12;
/// Bytes before the weights in the first format: magic, inputs, hidden
/// units.
const HEADER_V1: usize = MAGIC_V1.len() + 8;
/// The network's numbers: the hidden layer's weights and biases, then each
/// bucket's output weights (both views) and bias.
pub const PARAMETERS: usize = INPUTS * HIDDEN + HIDDEN + BUCKETS * (2 * HIDDEN + 1);
/// Bytes of a network file: every number an `i16` but the output biases,
/// which are `i32`.
pub const FILE_SIZE: usize = HEADER + 2 * (PARAMETERS - BUCKETS) + 4 * BUCKETS;
/// Bytes of a network file of the first format (still read, never written).
pub const FILE_SIZE_V1: usize = HEADER_V1 + 2 * (INPUTS * HIDDEN + HIDDEN + 2 * HIDDEN) + 4;
/// Most inputs active in one view at once: a position has at most 16
/// pieces (the records' bound; the game has 14).
pub const MAX_ACTIVE: usize = 16;
/// Hidden-layer weights and biases are within this (before scaling by
/// [`QA`]), so that no accumulator, a bias plus [`MAX_ACTIVE`] weights,
/// can overflow its i16.
pub const INPUT_WEIGHT_LIMIT: f32 = 7.5;
/// Output weights and the output bias are within this (before scaling),
/// so that the output sum of the clipped units fits an i32.
pub const OUTPUT_WEIGHT_LIMIT: f32 = 32.0;
/// The largest stored hidden-layer weight or bias.
const MAX_INPUT_WEIGHT: i32 = quantised_limit(INPUT_WEIGHT_LIMIT, QA);
/// The largest stored output weight.
const MAX_OUTPUT_WEIGHT: i32 = quantised_limit(OUTPUT_WEIGHT_LIMIT, QB);
/// The largest stored output bias.
const MAX_OUTPUT_BIAS: i32 = quantised_limit(OUTPUT_WEIGHT_LIMIT, QA * QB);
const _: () = assert!((MAX_ACTIVE as i32 + 1) * MAX_INPUT_WEIGHT <= i16::MAX as i32);
const _: () = assert!(
    (2 * HIDDEN as i64) * (QA as i64) * (MAX_OUTPUT_WEIGHT as i64) + MAX_OUTPUT_BIAS as i64
        <= i32::MAX as i64
);
/// Network evaluations are clamped within this many centi-guards: half the
/// scores of wins, so that no network, however extreme its weights, makes a
/// static evaluation read as a win, and the search's margins added to an
/// evaluation stay clear of them too. Trained networks stay far inside it
/// (their targets are sigmoid(score / [`SCALE`]); 4,000 already means 0.99995).
pub const EVAL_LIMIT: i32 = crate::search::MATE_BOUND / 2;

/// The output bucket of each number of pieces within two steps of the
/// throne: the few before the fight reaches it share one bucket, and the
/// counts of the middle game (7 to 11, two thirds of all positions in
/// self-play) have one each.
const BUCKET_OF_NEAR_COUNT: [u8; 20] = [0, 0, 0, 0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 7, 7, 7, 7, 7, 7, 7];

/// The output bucket of `position`, from the number of pieces (of both
/// sides) within two steps of the throne. Pieces only ever move towards the
/// throne or around it (a captured one is placed back outside), so the
/// count is the phase of an Agon game: how near the fight for the throne
/// is.
#[inline]
pub fn bucket(position: &Position) -> usize {
    let near = (position.occupied() & NEAR_THRONE).count_ones() as usize;
    usize::from(BUCKET_OF_NEAR_COUNT[near])
}

/// `limit` stored at `scale`, rounded as the trainer rounds (half away from
/// zero).
const fn quantised_limit(limit: f32, scale: i32) -> i32 {
    (limit * scale as f32 + 0.5) as i32
}

/// The network file built into the binary, in the source tree it was
/// built from.
pub const EMBEDDED_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/nets/agon.nnue");
/// The network shipped in the binary.
const EMBEDDED_BYTES: &[u8] =
    include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/nets/agon.nnue"));
const _: () = assert!(
    EMBEDDED_BYTES.len() == FILE_SIZE,
    "nets/agon.nnue is not a network file of the shape this code expects"
);

/// Why bytes or a file are not a network of this engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetworkError {
    /// The file could not be read.
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// The kind of failure.
        kind: std::io::ErrorKind,
        /// What the system said.
        message: String,
    },
    /// The bytes do not start like a network file.
    BadMagic,
    /// A network of another shape.
    Shape {
        /// Its inputs per view.
        inputs: u32,
        /// Its hidden units per view.
        hidden: u32,
        /// Its output buckets.
        buckets: u32,
    },
    /// A network file of the wrong length.
    Size(u64),
    /// Not a regular file (a device, a pipe, a directory).
    NotAFile,
    /// A weight beyond what the trainer produces.
    OutOfRange {
        /// Which weights.
        what: &'static str,
        /// Its place among them, from 0.
        index: usize,
        /// Its value.
        value: i32,
        /// The largest magnitude allowed.
        limit: i32,
    },
    /// A file's contents were refused (`reason` says why).
    InFile {
        /// The file.
        path: std::path::PathBuf,
        /// Why its contents were refused.
        reason: Box<NetworkError>,
    },
}

impl std::fmt::Display for NetworkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NetworkError::Read { path, message, .. } => {
                write!(
                    f,
                    "cannot read {}: {message}",
                    Quoted(&path.display().to_string())
                )
            }
            NetworkError::BadMagic => write!(f, "not an agon network file (bad magic)"),
            NetworkError::Shape {
                inputs,
                hidden,
                buckets,
            } => write!(
                f,
                "a network of {inputs} inputs, {hidden} hidden units and {buckets} output \
                 buckets; this engine needs {INPUTS}, {HIDDEN} and {BUCKETS}"
            ),
            NetworkError::Size(size) => write!(
                f,
                "a network file of {size} bytes; expected {FILE_SIZE} \
                 (or {FILE_SIZE_V1} in the first format)"
            ),
            NetworkError::NotAFile => write!(f, "not a regular file"),
            NetworkError::OutOfRange {
                what,
                index,
                value,
                limit,
            } => write!(
                f,
                "{what} {index} is {value}, beyond the limit {limit} (+/-) of a trained network"
            ),
            NetworkError::InFile { path, reason } => {
                write!(f, "{}: {reason}", Quoted(&path.display().to_string()))
            }
        }
    }
}

impl std::error::Error for NetworkError {}

/// A quantised network: the weights of the hidden layer (shared by both
/// views) and of the output, one set per bucket.
#[derive(Clone, PartialEq, Eq)]
pub struct Network {
    /// Per input, its weight into every hidden unit (scaled by [`QA`]).
    input_weights: Vec<[i16; HIDDEN]>,
    /// The hidden units' biases (scaled by [`QA`]).
    input_bias: [i16; HIDDEN],
    /// Per bucket, the side to move's hidden units, then the other side's
    /// (scaled by [`QB`]).
    output_weights: [[i16; 2 * HIDDEN]; BUCKETS],
    /// Per bucket, scaled by `QA * QB`.
    output_bias: [i32; BUCKETS],
    /// Where it came from, for `eval` and the logs.
    name: String,
}

impl std::fmt::Debug for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Network({})", self.name)
    }
}

/// The input of `piece` on `cell` in the view of `side`: its kind relative
/// to `side` and its cell, the board turned for Black.
#[inline(always)]
pub fn feature(side: Color, cell: Cell, piece: Piece) -> usize {
    let kind = usize::from(piece.color != side) * 4
        + usize::from(piece.kind == Kind::Queen) * 2
        + usize::from(piece.captured);
    let cell = if side == Color::White {
        dense(cell)
    } else {
        turned(dense(cell))
    };
    kind * CELL_COUNT + cell
}

/// The active inputs of `position` in the view of `side`.
pub fn features(position: &Position, side: Color) -> impl Iterator<Item = usize> + '_ {
    crate::rules::geometry::cells_of(position.occupied()).filter_map(move |cell| {
        position
            .piece_at(cell)
            .map(|piece| feature(side, cell, piece))
    })
}

/// The hidden layer of both views, White's first.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Accumulator {
    values: [[i16; HIDDEN]; 2],
}

impl Accumulator {
    /// All zero: a placeholder until computed.
    pub const EMPTY: Accumulator = Accumulator {
        values: [[0; HIDDEN]; 2],
    };

    /// The hidden layer of `position` computed from nothing.
    pub fn refresh(network: &Network, position: &Position) -> Accumulator {
        let mut accumulator = Accumulator::EMPTY;
        for side in [Color::White, Color::Black] {
            let values = &mut accumulator.values[side.index()];
            let mut pending = Pending::new(Level::detected(), &network.input_bias);
            for input in features(position, side) {
                pending.add(values, &network.input_weights[input]);
            }
            pending.flush(values);
        }
        accumulator
    }

    /// Makes this the accumulator of `after` from `parent`, the accumulator
    /// of `before`, a position one move earlier: only the cells whose
    /// content changed are looked at.
    pub fn update_from(
        &mut self,
        parent: &Accumulator,
        network: &Network,
        before: &Position,
        after: &Position,
    ) {
        let changed = (before.pieces(Color::White) ^ after.pieces(Color::White))
            | (before.pieces(Color::Black) ^ after.pieces(Color::Black))
            | (before.queens() ^ after.queens())
            | ((before.captured(Color::White) | before.captured(Color::Black))
                ^ (after.captured(Color::White) | after.captured(Color::Black)));
        let level = Level::detected();
        let mut pending = [
            Pending::new(level, &parent.values[0]),
            Pending::new(level, &parent.values[1]),
        ];
        for cell in crate::rules::geometry::cells_of(changed) {
            let old = before.piece_at(cell);
            let new = after.piece_at(cell);
            for side in [Color::White, Color::Black] {
                let values = &mut self.values[side.index()];
                let side_pending = &mut pending[side.index()];
                if let Some(piece) = old {
                    side_pending.remove(values, &network.input_weights[feature(side, cell, piece)]);
                }
                if let Some(piece) = new {
                    side_pending.add(values, &network.input_weights[feature(side, cell, piece)]);
                }
            }
        }
        for side in [Color::White, Color::Black] {
            pending[side.index()].flush(&mut self.values[side.index()]);
        }
    }
}

/// Reads a little-endian i16 at `offset`.
fn read_i16(bytes: &[u8], offset: usize) -> i16 {
    i16::from_le_bytes([bytes[offset], bytes[offset + 1]])
}

impl Network {
    /// The network built into the binary.
    pub fn embedded() -> &'static Network {
        static EMBEDDED: OnceLock<Network> = OnceLock::new();
        EMBEDDED.get_or_init(|| {
            Network::from_bytes(EMBEDDED_BYTES, "embedded")
                .expect("the embedded network is a valid network file")
        })
    }

    /// Parses a network file.
    ///
    /// # Errors
    ///
    /// Why the bytes are not a network of this engine's shape.
    ///
    /// A file of the first format (one output) is read as a network whose
    /// buckets all have that output.
    pub fn from_bytes(bytes: &[u8], name: &str) -> Result<Network, NetworkError> {
        let first_format = bytes.starts_with(MAGIC_V1);
        // Where the weights start, the file's length and its buckets.
        let (header, size, file_buckets) = if first_format {
            (HEADER_V1, FILE_SIZE_V1, 1)
        } else {
            (HEADER, FILE_SIZE, BUCKETS)
        };
        if bytes.len() < header || !(first_format || bytes.starts_with(MAGIC)) {
            return Err(NetworkError::BadMagic);
        }
        let word = |offset: usize| {
            [
                bytes[offset],
                bytes[offset + 1],
                bytes[offset + 2],
                bytes[offset + 3],
            ]
        };
        let read_u32 = |offset: usize| u32::from_le_bytes(word(offset));
        let (inputs, hidden) = (read_u32(8), read_u32(12));
        let buckets = if first_format { 1 } else { read_u32(16) };
        if inputs as usize != INPUTS
            || hidden as usize != HIDDEN
            || buckets as usize != file_buckets
        {
            return Err(NetworkError::Shape {
                inputs,
                hidden,
                buckets,
            });
        }
        if bytes.len() != size {
            return Err(NetworkError::Size(bytes.len() as u64));
        }
        let mut offset = header;
        let mut next = || {
            let value = read_i16(bytes, offset);
            offset += 2;
            value
        };
        let input_weights = (0..INPUTS)
            .map(|_| std::array::from_fn(|_| next()))
            .collect();
        let input_bias = std::array::from_fn(|_| next());
        let stored: Vec<[i16; 2 * HIDDEN]> = (0..file_buckets)
            .map(|_| std::array::from_fn(|_| next()))
            .collect();
        let biases_at = size - 4 * file_buckets;
        let stored_bias: Vec<i32> = (0..file_buckets)
            .map(|index| i32::from_le_bytes(word(biases_at + 4 * index)))
            .collect();
        let output_weights = std::array::from_fn(|index| stored[index % file_buckets]);
        let output_bias = std::array::from_fn(|index| stored_bias[index % file_buckets]);
        Network::from_parts(input_weights, input_bias, output_weights, output_bias, name)
    }

    /// Builds a network from quantised parts (the trainer's output).
    pub fn from_parts(
        input_weights: Vec<[i16; HIDDEN]>,
        input_bias: [i16; HIDDEN],
        output_weights: [[i16; 2 * HIDDEN]; BUCKETS],
        output_bias: [i32; BUCKETS],
        name: &str,
    ) -> Result<Network, NetworkError> {
        if input_weights.len() != INPUTS {
            return Err(NetworkError::Shape {
                inputs: u32::try_from(input_weights.len()).unwrap_or(u32::MAX),
                hidden: HIDDEN as u32,
                buckets: BUCKETS as u32,
            });
        }
        let within = |what, limit: i32, values: &mut dyn Iterator<Item = i32>| {
            values.enumerate().try_for_each(|(index, value)| {
                if (-limit..=limit).contains(&value) {
                    Ok(())
                } else {
                    Err(NetworkError::OutOfRange {
                        what,
                        index,
                        value,
                        limit,
                    })
                }
            })
        };
        within(
            "input weight",
            MAX_INPUT_WEIGHT,
            &mut input_weights.iter().flatten().map(|&w| i32::from(w)),
        )?;
        within(
            "hidden bias",
            MAX_INPUT_WEIGHT,
            &mut input_bias.iter().map(|&w| i32::from(w)),
        )?;
        within(
            "output weight",
            MAX_OUTPUT_WEIGHT,
            &mut output_weights.iter().flatten().map(|&w| i32::from(w)),
        )?;
        within(
            "output bias",
            MAX_OUTPUT_BIAS,
            &mut output_bias.iter().copied(),
        )?;
        Ok(Network {
            input_weights,
            input_bias,
            output_weights,
            output_bias,
            name: name.to_string(),
        })
    }

    /// Its quantised parts, in the order [`Network::from_parts`] takes them.
    #[allow(clippy::type_complexity)]
    pub fn parts(
        &self,
    ) -> (
        &[[i16; HIDDEN]],
        &[i16; HIDDEN],
        &[[i16; 2 * HIDDEN]; BUCKETS],
        &[i32; BUCKETS],
    ) {
        (
            &self.input_weights,
            &self.input_bias,
            &self.output_weights,
            &self.output_bias,
        )
    }

    /// The network file's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(FILE_SIZE);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&(INPUTS as u32).to_le_bytes());
        bytes.extend_from_slice(&(HIDDEN as u32).to_le_bytes());
        bytes.extend_from_slice(&(BUCKETS as u32).to_le_bytes());
        let values = self
            .input_weights
            .iter()
            .flatten()
            .chain(&self.input_bias)
            .chain(self.output_weights.iter().flatten());
        for value in values {
            bytes.extend_from_slice(&value.to_le_bytes());
        }
        for bias in &self.output_bias {
            bytes.extend_from_slice(&bias.to_le_bytes());
        }
        bytes
    }

    /// Reads a network file.
    ///
    /// # Errors
    ///
    /// The file's name with the reason it cannot be read or is no network.
    /// The file's size is checked before it is read, so that a device
    /// (`/dev/zero`) or a file of the wrong length is refused at once.
    pub fn load(path: &std::path::Path) -> Result<Network, NetworkError> {
        use std::io::Read;
        let unreadable = |error: std::io::Error| NetworkError::Read {
            path: path.to_path_buf(),
            kind: error.kind(),
            message: error.to_string(),
        };
        let in_file = |reason| NetworkError::InFile {
            path: path.to_path_buf(),
            reason: Box::new(reason),
        };
        // Looked at before it is opened: opening a named pipe would wait
        // for a writer.
        let metadata = std::fs::metadata(path).map_err(unreadable)?;
        if !metadata.is_file() {
            return Err(in_file(NetworkError::NotAFile));
        }
        if metadata.len() != FILE_SIZE as u64 && metadata.len() != FILE_SIZE_V1 as u64 {
            return Err(in_file(NetworkError::Size(metadata.len())));
        }
        let file = std::fs::File::open(path).map_err(unreadable)?;
        // Read one byte more than a network, so that a file still growing
        // is caught as the wrong size rather than read without end.
        let mut bytes = Vec::with_capacity(FILE_SIZE.max(FILE_SIZE_V1) + 1);
        file.take(metadata.len() + 1)
            .read_to_end(&mut bytes)
            .map_err(unreadable)?;
        Network::from_bytes(&bytes, &path.display().to_string()).map_err(in_file)
    }

    /// Where the network came from.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The score of `position`, whose hidden layer `accumulator` holds, in
    /// centi-guards from the side to move's view.
    #[inline]
    pub fn evaluate(&self, accumulator: &Accumulator, position: &Position) -> i32 {
        let side = position.side_to_move();
        let bucket = bucket(position);
        let ours = &accumulator.values[side.index()];
        let theirs = &accumulator.values[(!side).index()];
        let (our_weights, their_weights) = self.output_weights[bucket].split_at(HIDDEN);
        let level = Level::detected();
        let sum = simd::clipped_dot(level, ours, our_weights.try_into().expect("HIDDEN weights"))
            + simd::clipped_dot(
                level,
                theirs,
                their_weights.try_into().expect("HIDDEN weights"),
            )
            + self.output_bias[bucket];
        let centi = i64::from(sum) * i64::from(SCALE) / i64::from(QA * QB);
        centi.clamp(-i64::from(EVAL_LIMIT), i64::from(EVAL_LIMIT)) as i32
    }

    /// The score of `position` from nothing (no accumulator kept).
    pub fn evaluate_position(&self, position: &Position) -> i32 {
        self.evaluate(&Accumulator::refresh(self, position), position)
    }
}

/// The `eval` command's line for the network: its score of `position`
/// (side to move's view) and whether the search uses it.
pub fn describe(network: &Network, position: &Position, in_use: bool) -> String {
    format!(
        "network {} (side to move, {}; {}, {})",
        network.evaluate_position(position),
        position.side_to_move().name(),
        network.name(),
        if in_use {
            "in use"
        } else {
            "not in use: the hand-written terms below evaluate"
        }
    )
}

/// A network the options can hold: compared by identity, so that settings
/// stay cheap to copy.
#[derive(Clone, Copy)]
pub struct NetworkRef(pub &'static Network);

impl PartialEq for NetworkRef {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for NetworkRef {}

impl std::fmt::Debug for NetworkRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{START_FEN, parse_fen};

    #[test]
    fn the_embedded_network_round_trips_through_its_file_format() {
        let network = Network::embedded();
        let bytes = network.to_bytes();
        assert_eq!(
            (FILE_SIZE, FILE_SIZE_V1),
            (190_772, 187_156),
            "the sizes protocol.md's section 14 gives"
        );
        assert_eq!(bytes, EMBEDDED_BYTES);
        let again = Network::from_bytes(&bytes, "copy").unwrap();
        assert_eq!(again.to_bytes(), bytes);
        let position = parse_fen(START_FEN).unwrap();
        assert_eq!(
            again.evaluate_position(&position),
            network.evaluate_position(&position)
        );
    }

    /// A network file of the first format (one output) holding `network`'s
    /// hidden layer and the output of its bucket `bucket`.
    fn first_format(network: &Network, bucket: usize) -> Vec<u8> {
        let mut bytes = MAGIC_V1.to_vec();
        bytes.extend_from_slice(&(INPUTS as u32).to_le_bytes());
        bytes.extend_from_slice(&(HIDDEN as u32).to_le_bytes());
        let values = network
            .input_weights
            .iter()
            .flatten()
            .chain(&network.input_bias)
            .chain(&network.output_weights[bucket]);
        for value in values {
            bytes.extend_from_slice(&value.to_le_bytes());
        }
        bytes.extend_from_slice(&network.output_bias[bucket].to_le_bytes());
        bytes
    }

    #[test]
    fn a_first_format_file_is_read_with_its_output_in_every_bucket() {
        let network = Network::embedded();
        let last = BUCKETS - 1;
        let bytes = first_format(network, last);
        assert_eq!(bytes.len(), FILE_SIZE_V1);
        let read = Network::from_bytes(&bytes, "first").unwrap();
        let expected = Network::from_parts(
            network.input_weights.clone(),
            network.input_bias,
            [network.output_weights[last]; BUCKETS],
            [network.output_bias[last]; BUCKETS],
            "first",
        )
        .unwrap();
        assert!(read == expected);
        assert_eq!(read.to_bytes().len(), FILE_SIZE);
    }

    #[test]
    fn the_bucket_counts_the_pieces_within_two_steps_of_the_throne() {
        let start = parse_fen(START_FEN).unwrap();
        assert_eq!((start.occupied() & NEAR_THRONE).count_ones(), 0);
        assert_eq!(bucket(&start), 0);
        assert_eq!(
            usize::from(*BUCKET_OF_NEAR_COUNT.iter().max().unwrap()),
            BUCKETS - 1
        );
        assert!(BUCKET_OF_NEAR_COUNT.is_sorted());
        let mut seen = [false; BUCKETS];
        for fen in crate::tools::bench::bench_fens() {
            seen[bucket(&parse_fen(&fen).unwrap())] = true;
        }
        assert!(
            seen.iter().filter(|&&seen| seen).count() >= BUCKETS / 2,
            "{seen:?}"
        );
    }

    #[test]
    fn bad_network_files_are_refused_with_a_reason() {
        let good = Network::embedded().to_bytes();
        let mut other_buckets = good.clone();
        other_buckets[16..20].copy_from_slice(&(BUCKETS as u32 + 1).to_le_bytes());
        let cases: [(&[u8], &str); 5] = [
            (b"", "bad magic"),
            (&good[..good.len() - 1], "expected"),
            (b"AGONNUE1\x01\0\0\0\x01\0\0\0", "this engine needs"),
            (b"AGONNUE2\xd8\x02\0\0", "bad magic"),
            (&other_buckets, "output buckets; this engine needs"),
        ];
        for (bytes, reason) in cases {
            let error = Network::from_bytes(bytes, "test").unwrap_err().to_string();
            assert!(error.contains(reason), "{error}");
        }
        for bias in [i32::MIN, -MAX_OUTPUT_BIAS - 1, MAX_OUTPUT_BIAS + 1] {
            let mut beyond = good.clone();
            let end = beyond.len();
            beyond[end - 4..].copy_from_slice(&bias.to_le_bytes());
            let error = Network::from_bytes(&beyond, "test")
                .unwrap_err()
                .to_string();
            let last = format!("output bias {} is", BUCKETS - 1);
            assert!(error.contains(&last), "{error}");
        }
    }

    #[test]
    fn black_sees_the_start_position_as_white_does() {
        let position = parse_fen(START_FEN).unwrap();
        let white: Vec<usize> = features(&position, Color::White).collect();
        let mut black: Vec<usize> = features(&position, Color::Black).collect();
        let mut white_sorted = white.clone();
        white_sorted.sort_unstable();
        black.sort_unstable();
        assert_eq!(white_sorted, black);
        assert_eq!(white.len(), 14);
    }
}
