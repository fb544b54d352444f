//! `agon train`: fits a network to `agon datagen` records. The inputs are
//! sparse (at most 16 of 728 per view), so the trainer is written for them:
//! a forward pass adds the rows of the active inputs, and the backward pass
//! touches only those rows; the batch is split over threads, each with its
//! own gradient, and Adam updates the weights. The float network is then
//! quantised into the engine's format. After every epoch the network and a
//! checkpoint (float weights and optimiser state) are written whole, so a
//! stopped run resumes where its last epoch ended.

use super::atomic_file::{check_writable, write_atomically};
use super::datagen::{RECORD_SIZE, Record, is_throne_race};
use super::run_lock::{LockError, RunLock};
use super::seeds::part_seed;
use crate::rules::Position;
use crate::search::nnue::{
    BUCKETS, EMBEDDED_PATH, HIDDEN, INPUT_WEIGHT_LIMIT, INPUTS, MAX_ACTIVE as MAX_FEATURES,
    Network, OUTPUT_WEIGHT_LIMIT, PARAMETERS, QA, QB, SCALE, bucket, features,
};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How to train.
#[derive(Clone, Debug)]
pub struct TrainSettings {
    /// Passes over the training positions.
    pub epochs: usize,
    /// Positions per gradient step, at least 1.
    pub batch_size: usize,
    /// Adam's step size in the first epoch.
    pub learning_rate: f32,
    /// The step size is multiplied by this after every epoch.
    pub learning_rate_decay: f32,
    /// Weight of the game result in the target; the rest is the search
    /// score.
    pub result_weight: f32,
    /// The result weight of throne races against the side to move (see
    /// `agon datagen --stats`), whose search scores the data can show to
    /// be misjudged; `result_weight` when not set.
    pub throne_race_result_weight: Option<f32>,
    /// Share of the positions held out for the validation loss.
    pub validation_share: f64,
    /// Seed of the initial weights, the split and the order of positions.
    pub seed: u64,
    /// Threads sharing each batch.
    pub threads: usize,
    /// Where the network is written (after every epoch).
    pub output: PathBuf,
    /// Whether to continue from the checkpoint beside `output`.
    pub resume: bool,
    /// The network file whose weights a new run starts from instead of
    /// random ones, so that a generation refines the one before it.
    pub init: Option<PathBuf>,
    /// Whether `output` may be the network a build embeds.
    pub replace_embedded: bool,
}

impl TrainSettings {
    /// The weight of the game result in the target of `record`.
    pub fn result_weight_of(&self, record: &Record) -> f32 {
        match self.throne_race_result_weight {
            Some(weight) if is_throne_race(&record.position) => weight,
            _ => self.result_weight,
        }
    }

    /// The checkpoint written beside the network: `<output>.checkpoint`.
    pub fn checkpoint_path(&self) -> PathBuf {
        let mut name = OsString::from(self.output.as_os_str());
        name.push(".checkpoint");
        PathBuf::from(name)
    }
}

/// A training position: the active inputs of both views (side to move's
/// first), its output bucket and the target.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    inputs: [[u16; MAX_FEATURES]; 2],
    counts: [u8; 2],
    bucket: u8,
    target: f32,
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

impl Sample {
    /// The sample of `record`, its target blending the search score (as
    /// an expected result) and the game result.
    pub fn new(record: &Record, result_weight: f32) -> Sample {
        let side = record.position.side_to_move();
        let mut inputs = [[0u16; MAX_FEATURES]; 2];
        let mut counts = [0u8; 2];
        for (view, color) in [side, !side].into_iter().enumerate() {
            for (slot, input) in features(&record.position, color)
                .take(MAX_FEATURES)
                .enumerate()
            {
                inputs[view][slot] = input as u16;
                counts[view] = slot as u8 + 1;
            }
        }
        let score = sigmoid(f32::from(record.score) / SCALE as f32);
        let result = f32::from(record.result) / 2.0;
        Sample {
            inputs,
            counts,
            bucket: u8::try_from(bucket(&record.position)).expect("fewer than 256 buckets"),
            target: (1.0 - result_weight) * score + result_weight * result,
        }
    }

    fn view(&self, view: usize) -> &[u16] {
        &self.inputs[view][..usize::from(self.counts[view])]
    }

    fn bucket(&self) -> usize {
        usize::from(self.bucket)
    }
}

/// The network in floating point, as trained.
#[derive(Clone, Debug, PartialEq)]
pub struct FloatNetwork {
    input_weights: Vec<[f32; HIDDEN]>,
    input_bias: [f32; HIDDEN],
    /// Per output bucket.
    output_weights: Vec<[f32; 2 * HIDDEN]>,
    output_bias: [f32; BUCKETS],
}

/// The hidden layer of both views for one sample.
struct Hidden {
    sums: [[f32; HIDDEN]; 2],
}

impl FloatNetwork {
    /// Small random weights from `rng`; every bucket starts with the same
    /// output weights.
    pub fn random(rng: &mut StdRng) -> FloatNetwork {
        let input_weights = (0..INPUTS)
            .map(|_| std::array::from_fn(|_| rng.random_range(-0.15..0.15)))
            .collect();
        let input_bias = std::array::from_fn(|_| rng.random_range(0.0..0.5));
        let output: [f32; 2 * HIDDEN] = std::array::from_fn(|_| rng.random_range(-0.1..0.1));
        FloatNetwork {
            input_weights,
            input_bias,
            output_weights: vec![output; BUCKETS],
            output_bias: [0.0; BUCKETS],
        }
    }

    /// The float network that rounds to `network`: dequantising and
    /// quantising again gives the same integers.
    pub fn dequantise(network: &Network) -> FloatNetwork {
        let (input_weights, input_bias, output_weights, output_bias) = network.parts();
        let scaled = |value: i16, scale: i32| f32::from(value) / scale as f32;
        FloatNetwork {
            input_weights: input_weights
                .iter()
                .map(|row| row.map(|weight| scaled(weight, QA)))
                .collect(),
            input_bias: input_bias.map(|bias| scaled(bias, QA)),
            output_weights: output_weights
                .iter()
                .map(|row| row.map(|weight| scaled(weight, QB)))
                .collect(),
            output_bias: output_bias.map(|bias| bias as f32 / (QA * QB) as f32),
        }
    }

    fn zero() -> FloatNetwork {
        FloatNetwork {
            input_weights: vec![[0.0; HIDDEN]; INPUTS],
            input_bias: [0.0; HIDDEN],
            output_weights: vec![[0.0; 2 * HIDDEN]; BUCKETS],
            output_bias: [0.0; BUCKETS],
        }
    }

    fn hidden(&self, sample: &Sample) -> Hidden {
        let mut sums = [self.input_bias; 2];
        for (view, sum) in sums.iter_mut().enumerate() {
            for &input in sample.view(view) {
                for (value, weight) in sum.iter_mut().zip(&self.input_weights[usize::from(input)]) {
                    *value += weight;
                }
            }
        }
        Hidden { sums }
    }

    /// The raw output (centi-guards / [`SCALE`]) in output bucket `bucket`.
    fn output(&self, hidden: &Hidden, bucket: usize) -> f32 {
        let mut total = self.output_bias[bucket];
        for (view, sum) in hidden.sums.iter().enumerate() {
            let weights = &self.output_weights[bucket][view * HIDDEN..(view + 1) * HIDDEN];
            for (value, weight) in sum.iter().zip(weights) {
                total += value.clamp(0.0, 1.0) * weight;
            }
        }
        total
    }

    /// The evaluation of `position` in centi-guards, side to move's view:
    /// the float reference of the engine's integer inference.
    pub fn evaluate(&self, position: &Position) -> f32 {
        let record = Record {
            position: *position,
            score: 0,
            ply: 0,
            result: 1,
        };
        let sample = Sample::new(&record, 0.0);
        self.output(&self.hidden(&sample), sample.bucket()) * SCALE as f32
    }

    /// The squared error of `sample`, adding its gradient to `gradient`
    /// when given.
    fn loss(&self, sample: &Sample, gradient: Option<&mut FloatNetwork>) -> f32 {
        let hidden = self.hidden(sample);
        let bucket = sample.bucket();
        let predicted = sigmoid(self.output(&hidden, bucket));
        let error = predicted - sample.target;
        if let Some(gradient) = gradient {
            let slope = 2.0 * error * predicted * (1.0 - predicted);
            gradient.output_bias[bucket] += slope;
            let weights = &self.output_weights[bucket];
            let weight_gradient = &mut gradient.output_weights[bucket];
            for (view, sum) in hidden.sums.iter().enumerate() {
                let offset = view * HIDDEN;
                let mut back = [0.0f32; HIDDEN];
                for unit in 0..HIDDEN {
                    let value = sum[unit];
                    weight_gradient[offset + unit] += slope * value.clamp(0.0, 1.0);
                    if value > 0.0 && value < 1.0 {
                        back[unit] = slope * weights[offset + unit];
                    }
                }
                for (bias, delta) in gradient.input_bias.iter_mut().zip(&back) {
                    *bias += delta;
                }
                for &input in sample.view(view) {
                    let row = &mut gradient.input_weights[usize::from(input)];
                    for (weight, delta) in row.iter_mut().zip(&back) {
                        *weight += delta;
                    }
                }
            }
        }
        error * error
    }

    fn parameters_mut(&mut self) -> impl Iterator<Item = (&mut f32, f32)> {
        let inputs = self
            .input_weights
            .iter_mut()
            .flatten()
            .chain(self.input_bias.iter_mut())
            .map(|value| (value, INPUT_WEIGHT_LIMIT));
        let outputs = self
            .output_weights
            .iter_mut()
            .flatten()
            .chain(self.output_bias.iter_mut())
            .map(|value| (value, OUTPUT_WEIGHT_LIMIT));
        inputs.chain(outputs)
    }

    fn parameters(&self) -> impl Iterator<Item = f32> + '_ {
        self.input_weights
            .iter()
            .flatten()
            .chain(&self.input_bias)
            .chain(self.output_weights.iter().flatten())
            .chain(&self.output_bias)
            .copied()
    }

    fn add(&mut self, other: &FloatNetwork) {
        let values: Vec<f32> = other.parameters().collect();
        for ((value, _), delta) in self.parameters_mut().zip(values) {
            *value += delta;
        }
    }

    fn clear(&mut self) {
        for (value, _) in self.parameters_mut() {
            *value = 0.0;
        }
    }

    /// The engine's integer network (weights rounded to their scales).
    pub fn quantise(&self, name: &str) -> Network {
        let round = |value: f32, scale: i32| -> i16 {
            (value * scale as f32)
                .round()
                .clamp(f32::from(i16::MIN), f32::from(i16::MAX)) as i16
        };
        let input_weights = self
            .input_weights
            .iter()
            .map(|row| std::array::from_fn(|unit| round(row[unit], QA)))
            .collect();
        let input_bias = std::array::from_fn(|unit| round(self.input_bias[unit], QA));
        let output_weights = std::array::from_fn(|bucket| {
            std::array::from_fn(|unit| round(self.output_weights[bucket][unit], QB))
        });
        let output_bias = std::array::from_fn(|bucket| {
            (self.output_bias[bucket] * (QA * QB) as f32).round() as i32
        });
        Network::from_parts(input_weights, input_bias, output_weights, output_bias, name)
            .expect("the float network has the engine's shape")
    }
}

/// Adam's running moments.
#[derive(Clone, Debug, PartialEq)]
struct Adam {
    first: Vec<f32>,
    second: Vec<f32>,
    steps: i32,
}

impl Adam {
    const BETA1: f32 = 0.9;
    const BETA2: f32 = 0.999;
    const EPSILON: f32 = 1e-8;

    fn new(parameters: usize) -> Adam {
        Adam {
            first: vec![0.0; parameters],
            second: vec![0.0; parameters],
            steps: 0,
        }
    }

    fn step(&mut self, network: &mut FloatNetwork, gradient: &FloatNetwork, rate: f32) {
        self.steps += 1;
        let correction1 = 1.0 - Self::BETA1.powi(self.steps);
        let correction2 = 1.0 - Self::BETA2.powi(self.steps);
        let parameters = network.parameters_mut();
        let gradients = gradient.parameters();
        for (((value, limit), grad), (first, second)) in parameters
            .zip(gradients)
            .zip(self.first.iter_mut().zip(self.second.iter_mut()))
        {
            *first = Self::BETA1 * *first + (1.0 - Self::BETA1) * grad;
            *second = Self::BETA2 * *second + (1.0 - Self::BETA2) * grad * grad;
            let update =
                rate * (*first / correction1) / ((*second / correction2).sqrt() + Self::EPSILON);
            *value = (*value - update).clamp(-limit, limit);
        }
    }
}

/// The mean loss over `samples`, spread over `threads`.
fn mean_loss(network: &FloatNetwork, samples: &[Sample], threads: usize) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    summed_loss(network, samples, threads, None) / samples.len() as f64
}

/// The summed loss over `samples` cut into one part per thread (see
/// [`part_size`]); with `gradients`, each part's gradient is also summed
/// into that thread's own slot, cleared first. A thread that panicked is a
/// trainer bug: the panic goes on rather than a part silently counting 0.
fn summed_loss(
    network: &FloatNetwork,
    samples: &[Sample],
    threads: usize,
    gradients: Option<&mut [FloatNetwork]>,
) -> f64 {
    let mut slots = gradients.map(|gradients| gradients.iter_mut());
    std::thread::scope(|scope| {
        let handles: Vec<_> = samples
            .chunks(part_size(samples.len(), threads))
            .map(|part| {
                let mut gradient = slots.as_mut().and_then(Iterator::next);
                scope.spawn(move || {
                    if let Some(gradient) = gradient.as_deref_mut() {
                        gradient.clear();
                    }
                    part.iter()
                        .map(|sample| f64::from(network.loss(sample, gradient.as_deref_mut())))
                        .sum::<f64>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .sum()
    })
}

/// The length of each thread's part of `len` samples.
fn part_size(len: usize, threads: usize) -> usize {
    len.div_ceil(threads.max(1)).max(1)
}

/// The losses of one epoch.
#[derive(Clone, Copy, Debug)]
pub struct EpochLoss {
    /// Mean loss over the training positions, as trained.
    pub train: f64,
    /// Mean loss over the held-out positions after the epoch.
    pub validation: f64,
}

/// Why training failed.
#[derive(Debug)]
pub enum TrainError {
    /// A record file could not be read.
    Data(super::datagen::DatagenError),
    /// The files hold no record.
    NoRecords,
    /// `--validation` holds out every position (none is left to train on)
    /// or, being above 0, none (the validation loss would be of nothing).
    EmptySplit {
        /// The positions of the files.
        positions: usize,
        /// The share asked for.
        share: f64,
        /// The positions it holds out.
        held_out: usize,
    },
    /// A network or checkpoint file could not be written.
    Write {
        /// The file.
        path: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
    /// The output is the network a build embeds, and `--replace-embedded`
    /// was not given.
    EmbeddedOutput(PathBuf),
    /// The output, or the checkpoint beside it, is one of the record files.
    OutputIsInput {
        /// The network or checkpoint file that would be written.
        output: PathBuf,
        /// The record file it is, as named among the inputs.
        input: PathBuf,
    },
    /// Another process trains into the same output.
    Locked(LockError),
    /// The `--init` network could not be read.
    Init(crate::search::nnue::NetworkError),
    /// `--resume` found no usable checkpoint.
    Checkpoint {
        /// The checkpoint file.
        path: PathBuf,
        /// Why it cannot be resumed from.
        reason: String,
    },
    /// The loss lines could not be written.
    Output(std::io::Error),
}

impl std::fmt::Display for TrainError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TrainError::Data(error) => write!(f, "{error}"),
            TrainError::NoRecords => write!(f, "no records to train on"),
            TrainError::EmptySplit {
                positions,
                share,
                held_out,
            } if held_out == positions => write!(
                f,
                "--validation {share} holds out all {positions} positions, leaving no position \
                 to train on: give a smaller share or more records"
            ),
            TrainError::EmptySplit {
                positions, share, ..
            } => write!(
                f,
                "--validation {share} holds out none of {positions} positions, leaving none to \
                 validate on: give a larger share, more records or --validation 0"
            ),
            TrainError::Write { path, error } => {
                write!(f, "cannot write {}: {error}", path.display())
            }
            TrainError::EmbeddedOutput(path) => write!(
                f,
                "{} is the network built into agon: a run stopped or gone wrong would break \
                 the next build; train into another file and copy it there, or pass \
                 --replace-embedded",
                path.display()
            ),
            TrainError::OutputIsInput { output, input } => write!(
                f,
                "{} is one of the record files ({}): training would write over the records; \
                 give --output another name",
                output.display(),
                input.display()
            ),
            TrainError::Locked(error) => write!(f, "the output file: {error}"),
            TrainError::Init(error) => write!(f, "cannot start from --init: {error}"),
            TrainError::Checkpoint { path, reason } => {
                write!(f, "cannot resume from {}: {reason}", path.display())
            }
            TrainError::Output(error) => write!(f, "cannot write the losses: {error}"),
        }
    }
}

impl std::error::Error for TrainError {}

/// Whether `path` names a network that a build embeds: this build's
/// (`nets/agon.nnue` of its source tree) or that of any agon source tree.
pub fn is_embedded_network(path: &Path) -> bool {
    let canonical = |path: &Path| {
        std::fs::canonicalize(path).ok().or_else(|| {
            let name = path.file_name()?;
            let parent = match path.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => parent,
                _ => Path::new("."),
            };
            Some(std::fs::canonicalize(parent).ok()?.join(name))
        })
    };
    let Some(resolved) = canonical(path) else {
        return false;
    };
    canonical(Path::new(EMBEDDED_PATH)).is_some_and(|embedded| embedded == resolved)
        || resolved.ends_with(Path::new("nets/agon.nnue"))
}

/// Whether `a` and `b` name one existing file (through links, `..` or any
/// other path to it).
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
    }
}

/// Where a run stands after an epoch: everything the next epoch needs.
#[derive(Clone, Debug, PartialEq)]
struct Checkpoint {
    /// Epochs done.
    epochs: u32,
    /// The step size of the next epoch.
    rate: f32,
    /// The data and settings the run was started with, so that a resume
    /// with others is refused rather than silently mixed.
    fingerprint: u64,
    network: FloatNetwork,
    adam: Adam,
}

impl Checkpoint {
    /// The format's name and version: version 1 held a fingerprint made
    /// with the standard library's hasher, which is not stable across Rust
    /// releases.
    const MAGIC: &'static [u8; 8] = b"AGONCKP2";
    /// Magic, epochs, rate, Adam's steps, fingerprint, parameter count.
    const HEADER: usize = 8 + 4 + 4 + 4 + 8 + 8;

    fn file_size() -> u64 {
        (Self::HEADER + 3 * 4 * PARAMETERS) as u64
    }

    fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(Self::file_size() as usize);
        bytes.extend_from_slice(Self::MAGIC);
        bytes.extend_from_slice(&self.epochs.to_le_bytes());
        bytes.extend_from_slice(&self.rate.to_le_bytes());
        bytes.extend_from_slice(&self.adam.steps.to_le_bytes());
        bytes.extend_from_slice(&self.fingerprint.to_le_bytes());
        bytes.extend_from_slice(&(PARAMETERS as u64).to_le_bytes());
        let values = self
            .network
            .parameters()
            .chain(self.adam.first.iter().copied())
            .chain(self.adam.second.iter().copied());
        for value in values {
            bytes.extend_from_slice(&value.to_le_bytes());
        }
        bytes
    }

    /// Reads the checkpoint at `path`, checking its size before reading.
    fn load(path: &Path) -> Result<Checkpoint, String> {
        let mut file = std::fs::File::open(path).map_err(|e| e.to_string())?;
        let size = file.metadata().map_err(|e| e.to_string())?.len();
        if size != Self::file_size() {
            return Err(format!(
                "{size} bytes, a checkpoint of this trainer has {}",
                Self::file_size()
            ));
        }
        let mut bytes = Vec::with_capacity(size as usize);
        file.read_to_end(&mut bytes).map_err(|e| e.to_string())?;
        if bytes.len() as u64 != size || !bytes.starts_with(b"AGONCKP") {
            return Err("not a checkpoint of agon train".into());
        }
        if &bytes[..8] != Self::MAGIC {
            return Err(format!(
                "a checkpoint of another version of agon train ({}), whose fingerprint this \
                 one cannot check: train again without --resume",
                String::from_utf8_lossy(&bytes[..8])
            ));
        }
        let word = |offset: usize| -> [u8; 4] {
            [
                bytes[offset],
                bytes[offset + 1],
                bytes[offset + 2],
                bytes[offset + 3],
            ]
        };
        let mut wide = [0u8; 8];
        wide.copy_from_slice(&bytes[20..28]);
        let mut floats = bytes[Self::HEADER..]
            .chunks_exact(4)
            .map(|chunk| f32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]));
        let mut network = FloatNetwork::zero();
        for ((value, _), stored) in network.parameters_mut().zip(floats.by_ref()) {
            *value = stored;
        }
        let first: Vec<f32> = floats.by_ref().take(PARAMETERS).collect();
        let second: Vec<f32> = floats.collect();
        Ok(Checkpoint {
            epochs: u32::from_le_bytes(word(8)),
            rate: f32::from_le_bytes(word(12)),
            fingerprint: u64::from_le_bytes(wide),
            network,
            adam: Adam {
                first,
                second,
                steps: i32::from_le_bytes(word(16)),
            },
        })
    }
}

/// What a checkpoint must have been made with to be resumed: the samples
/// in their split order, the seed, the batch size, the targets and the step
/// sizes (the epoch count may grow, and the thread count only changes the
/// rounding of sums). Not the `--init` network: the checkpoint holds the
/// weights, so a resumed run is not given it again.
fn fingerprint(settings: &TrainSettings, train: &[Sample], validation: &[Sample]) -> u64 {
    let mut samples = Fnv1a::new();
    for sample in train.iter().chain(validation) {
        for view in 0..2 {
            for &input in sample.view(view) {
                samples.write(&input.to_le_bytes());
            }
            samples.write(&[sample.counts[view]]);
        }
        samples.write(&sample.target.to_bits().to_le_bytes());
    }
    part_seed(
        settings.seed,
        &[
            samples.0,
            train.len() as u64,
            validation.len() as u64,
            settings.batch_size as u64,
            u64::from(settings.result_weight.to_bits()),
            settings.validation_share.to_bits(),
            u64::from(settings.learning_rate.to_bits()),
            u64::from(settings.learning_rate_decay.to_bits()),
        ],
    )
}

/// The 64-bit FNV-1a hash: defined by two constants, so that a
/// fingerprint stored in a checkpoint means the same to every build (the
/// standard library's hasher may change from one Rust release to another).
struct Fnv1a(u64);

impl Fnv1a {
    const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;

    fn new() -> Fnv1a {
        Fnv1a(Self::OFFSET_BASIS)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0 ^ u64::from(byte)).wrapping_mul(Self::PRIME);
        }
    }
}

/// The generator of epoch `epoch`'s shuffle: one per epoch, so that a
/// resumed run replays the shuffles of the epochs it skips exactly.
fn epoch_rng(seed: u64, epoch: usize) -> StdRng {
    StdRng::seed_from_u64(part_seed(seed, &[epoch as u64]))
}

/// Trains on `samples` (already split), returning the network and the
/// loss of each epoch run; writes one line per epoch to `out` and progress
/// to `progress` every `interval`. With `settings.resume`, starts from the
/// checkpoint beside the output, else from `init` or random weights.
pub fn fit(
    train: &mut [Sample],
    validation: &[Sample],
    init: Option<&Network>,
    settings: &TrainSettings,
    out: &mut dyn Write,
    progress: &mut dyn Write,
    interval: Duration,
) -> Result<(FloatNetwork, Vec<EpochLoss>), TrainError> {
    let threads = settings.threads.max(1);
    let checkpoint_path = settings.checkpoint_path();
    let fingerprint = fingerprint(settings, train, validation);
    let write = |out: &mut dyn Write, line: String| {
        writeln!(out, "{line}")
            .and_then(|()| out.flush())
            .map_err(TrainError::Output)
    };
    let mut state = if settings.resume {
        let checkpoint =
            Checkpoint::load(&checkpoint_path).map_err(|reason| TrainError::Checkpoint {
                path: checkpoint_path.clone(),
                reason,
            })?;
        if checkpoint.fingerprint != fingerprint {
            return Err(TrainError::Checkpoint {
                path: checkpoint_path,
                reason: "it was made from other records or with other settings \
                         (seed, batch, rates, result weight, validation share)"
                    .into(),
            });
        }
        write(
            out,
            format!(
                "resuming after epoch {} from {}",
                checkpoint.epochs,
                checkpoint_path.display()
            ),
        )?;
        checkpoint
    } else {
        let network = init.map_or_else(
            || FloatNetwork::random(&mut StdRng::seed_from_u64(settings.seed)),
            FloatNetwork::dequantise,
        );
        write(
            out,
            format!(
                "epoch 0 validation loss {:.6}",
                mean_loss(&network, validation, threads)
            ),
        )?;
        Checkpoint {
            epochs: 0,
            rate: settings.learning_rate,
            fingerprint,
            adam: Adam::new(network.parameters().count()),
            network,
        }
    };
    for epoch in 1..=state.epochs as usize {
        train.shuffle(&mut epoch_rng(settings.seed, epoch));
    }
    let mut gradients: Vec<FloatNetwork> = (0..threads).map(|_| FloatNetwork::zero()).collect();
    let mut total = FloatNetwork::zero();
    let mut losses = Vec::new();
    for epoch in state.epochs as usize + 1..=settings.epochs {
        let started = Instant::now();
        let mut last = Instant::now();
        train.shuffle(&mut epoch_rng(settings.seed, epoch));
        let batches = train.len().div_ceil(settings.batch_size);
        let mut loss_sum = 0.0f64;
        for (index, batch) in train.chunks(settings.batch_size).enumerate() {
            loss_sum += summed_loss(&state.network, batch, threads, Some(&mut gradients));
            total.clear();
            let used = batch.len().div_ceil(part_size(batch.len(), threads));
            for gradient in gradients.iter().take(used) {
                total.add(gradient);
            }
            let scale = 1.0 / batch.len() as f32;
            for (value, _) in total.parameters_mut() {
                *value *= scale;
            }
            state.adam.step(&mut state.network, &total, state.rate);
            if last.elapsed() >= interval {
                last = Instant::now();
                let _ = writeln!(
                    progress,
                    "epoch {epoch}/{} batch {}/{batches} loss {:.6} ({:.0} positions/s)",
                    settings.epochs,
                    index + 1,
                    loss_sum / ((index + 1) * settings.batch_size).min(train.len()) as f64,
                    ((index + 1) * settings.batch_size) as f64 / started.elapsed().as_secs_f64()
                );
            }
        }
        let loss = EpochLoss {
            train: loss_sum / train.len().max(1) as f64,
            validation: mean_loss(&state.network, validation, threads),
        };
        losses.push(loss);
        let line = format!(
            "epoch {epoch} train loss {:.6} validation loss {:.6} rate {:.6} ({:.1}s)",
            loss.train,
            loss.validation,
            state.rate,
            started.elapsed().as_secs_f64()
        );
        state.epochs = epoch as u32;
        state.rate *= settings.learning_rate_decay;
        // The network first: killed between the two writes, the resumed
        // run redoes this epoch and writes the same network again.
        let network = state
            .network
            .quantise(&settings.output.display().to_string())
            .to_bytes();
        for (path, bytes) in [
            (&settings.output, network),
            (&checkpoint_path, state.to_bytes()),
        ] {
            write_atomically(path, &bytes).map_err(|error| TrainError::Write {
                path: path.clone(),
                error,
            })?;
        }
        // Printed once the epoch is saved: a run stopped after this line
        // resumes after this epoch.
        write(out, line)?;
    }
    Ok((state.network, losses))
}

/// The record numbers of the training and the validation positions: a
/// seeded shuffle, the last `validation_share` of it held out.
fn split_order(records: usize, settings: &TrainSettings) -> (Vec<usize>, Vec<usize>) {
    let mut order: Vec<usize> = (0..records).collect();
    let mut rng = StdRng::seed_from_u64(settings.seed ^ 0x5EED_5917);
    order.shuffle(&mut rng);
    let held = ((records as f64) * settings.validation_share).round() as usize;
    let validation = order.split_off(records - held.min(records));
    (order, validation)
}

/// Splits `records` into training and validation samples (see
/// [`split_order`]).
pub fn split(records: &[Record], settings: &TrainSettings) -> (Vec<Sample>, Vec<Sample>) {
    let (train, validation) = split_order(records.len(), settings);
    let samples = |order: Vec<usize>| -> Vec<Sample> {
        order
            .into_iter()
            .map(|index| Sample::new(&records[index], settings.result_weight_of(&records[index])))
            .collect()
    };
    (samples(train), samples(validation))
}

/// The loss of the hand-written evaluation on the validation positions
/// (the same split as [`split`]).
fn hand_loss(records: &[Record], settings: &TrainSettings) -> f64 {
    let (_, validation) = split_order(records.len(), settings);
    let percent = crate::search::eval::FULL_PERCENTS;
    let total: f64 = validation
        .iter()
        .map(|&index| {
            let record = &records[index];
            let sample = Sample::new(record, settings.result_weight_of(record));
            let score = crate::search::eval::evaluate(&record.position, &percent);
            let error = f64::from(sigmoid(score as f32 / SCALE as f32) - sample.target);
            error * error
        })
        .sum();
    total / validation.len().max(1) as f64
}

/// `agon train`: reads the record files, trains, writes the network.
///
/// # Errors
///
/// Why, when a file cannot be read or written, the files hold no records,
/// the output is the embedded network or one of the record files, another
/// process trains into it, the split leaves no position to train or to
/// validate on, or a resume has no checkpoint fit for it.
pub fn run(
    files: &[PathBuf],
    settings: &TrainSettings,
    out: &mut dyn Write,
) -> Result<(), TrainError> {
    if !settings.replace_embedded && is_embedded_network(&settings.output) {
        return Err(TrainError::EmbeddedOutput(settings.output.clone()));
    }
    for output in [settings.output.clone(), settings.checkpoint_path()] {
        if let Some(input) = files.iter().find(|file| same_file(file, &output)) {
            return Err(TrainError::OutputIsInput {
                output,
                input: input.clone(),
            });
        }
        // Before the records are read: a missing directory fails at once,
        // not when the first epoch is written.
        check_writable(&output).map_err(|error| TrainError::Write {
            path: output.clone(),
            error,
        })?;
    }
    // Two runs on one output would write each other's network and
    // checkpoint.
    let _run_lock = RunLock::take(&settings.output).map_err(TrainError::Locked)?;
    // Read before the records, so that a wrong path fails at once.
    let init = settings
        .init
        .as_deref()
        .map(Network::load)
        .transpose()
        .map_err(TrainError::Init)?;
    let mut records = Vec::new();
    for file in files {
        let before = records.len();
        records.extend(super::datagen::read_records(file).map_err(TrainError::Data)?);
        let _ = writeln!(
            std::io::stderr(),
            "{}: {} records",
            file.display(),
            records.len() - before
        );
    }
    if records.is_empty() {
        return Err(TrainError::NoRecords);
    }
    let (mut train, validation) = split(&records, settings);
    if train.is_empty() || (validation.is_empty() && settings.validation_share > 0.0) {
        return Err(TrainError::EmptySplit {
            positions: records.len(),
            share: settings.validation_share,
            held_out: validation.len(),
        });
    }
    writeln!(
        out,
        "the hand-written evaluation's validation loss, for reference: {:.6}",
        hand_loss(&records, settings)
    )
    .map_err(TrainError::Output)?;
    drop(records);
    writeln!(
        out,
        "training on {} positions, validating on {} ({} bytes of records each)",
        train.len(),
        validation.len(),
        RECORD_SIZE
    )
    .map_err(TrainError::Output)?;
    let mut per_bucket = [0usize; BUCKETS];
    for sample in &train {
        per_bucket[sample.bucket()] += 1;
    }
    let shares: Vec<String> = per_bucket
        .iter()
        .map(|&count| format!("{:.1}%", 100.0 * count as f64 / train.len() as f64))
        .collect();
    writeln!(
        out,
        "training positions by output bucket (0 to {}, by pieces near the throne): {}",
        BUCKETS - 1,
        shares.join(" ")
    )
    .map_err(TrainError::Output)?;
    fit(
        &mut train,
        &validation,
        init.as_ref(),
        settings,
        out,
        &mut std::io::stderr(),
        Duration::from_secs(10),
    )?;
    writeln!(
        out,
        "network written to {} (checkpoint {})",
        settings.output.display(),
        settings.checkpoint_path().display()
    )
    .map_err(TrainError::Output)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::parse_fen;
    use crate::tools::bench::bench_fens;

    /// Settings of a small run: a result weight of 0.25, no validation.
    fn settings() -> TrainSettings {
        TrainSettings {
            epochs: 1,
            batch_size: 1,
            learning_rate: 0.001,
            learning_rate_decay: 1.0,
            result_weight: 0.25,
            throne_race_result_weight: None,
            validation_share: 0.0,
            seed: 1,
            threads: 1,
            output: PathBuf::from("unused.nnue"),
            resume: false,
            init: None,
            replace_embedded: false,
        }
    }

    #[test]
    fn the_float_network_has_the_engines_count_of_numbers() {
        assert_eq!(FloatNetwork::zero().parameters().count(), PARAMETERS);
        let mut zero = FloatNetwork::zero();
        assert_eq!(zero.parameters_mut().count(), PARAMETERS);
    }

    #[test]
    fn dequantising_the_embedded_network_and_quantising_again_gives_it_back() {
        let network = Network::embedded();
        let again = FloatNetwork::dequantise(network).quantise(network.name());
        assert!(again == *network, "the round trip changed the network");
    }

    #[test]
    fn integer_inference_agrees_with_the_float_network() {
        let mut rng = StdRng::seed_from_u64(7);
        let float = FloatNetwork::random(&mut rng);
        let network = float.quantise("test");
        let mut worst = 0.0f32;
        for fen in bench_fens() {
            let position = parse_fen(&fen).unwrap();
            let reference = float.evaluate(&position);
            let integer = network.evaluate_position(&position) as f32;
            worst = worst.max((reference - integer).abs());
        }
        eprintln!("worst difference {worst}");
        assert!(worst <= 4.0, "worst difference {worst} centi-guards");
    }

    #[test]
    fn fnv1a_gives_the_published_values() {
        for (text, hash) in [
            ("", 0xcbf2_9ce4_8422_2325),
            ("a", 0xaf63_dc4c_8601_ec8c),
            ("foobar", 0x8594_4171_f739_67e8),
        ] {
            let mut hasher = Fnv1a::new();
            hasher.write(text.as_bytes());
            assert_eq!(hasher.0, hash, "{text:?}");
        }
    }

    /// The fingerprint is stored in checkpoints and compared on `--resume`:
    /// the same samples and settings give the same number in every build.
    #[test]
    fn the_fingerprint_of_fixed_samples_and_settings_is_fixed() {
        let records: Vec<Record> = (0..20u8)
            .map(|index| Record {
                position: crate::rules::start_position(),
                score: i16::from(index) * 10 - 50,
                ply: 0,
                result: index % 3,
            })
            .collect();
        let settings = TrainSettings {
            validation_share: 0.2,
            ..settings()
        };
        let (train, validation) = split(&records, &settings);
        assert_eq!(
            fingerprint(&settings, &train, &validation),
            3_173_993_238_244_517_755,
            "train {} validation {}",
            train.len(),
            validation.len()
        );
    }

    /// A checkpoint reads back as written; one of the first format, whose
    /// fingerprint came from an unstable hasher, is refused with a reason.
    #[test]
    fn checkpoints_read_back_and_the_first_format_is_refused() {
        let mut rng = StdRng::seed_from_u64(3);
        let checkpoint = Checkpoint {
            epochs: 2,
            rate: 0.0005,
            fingerprint: 77,
            network: FloatNetwork::random(&mut rng),
            adam: Adam::new(PARAMETERS),
        };
        let dir = crate::tools::scratch_dir("checkpoint");
        let path = dir.path().join("net.nnue.checkpoint");
        let mut bytes = checkpoint.to_bytes();
        std::fs::write(&path, &bytes).unwrap();
        assert!(Checkpoint::load(&path).unwrap() == checkpoint);
        bytes[..8].copy_from_slice(b"AGONCKP1");
        std::fs::write(&path, &bytes).unwrap();
        let reason = Checkpoint::load(&path).unwrap_err();
        assert!(reason.contains("another version"), "{reason}");
    }

    /// A throne race takes its own result weight when one is set, any other
    /// position the common one; a race's target is then its result alone.
    #[test]
    fn throne_races_take_their_own_result_weight() {
        let record = |position: Position| Record {
            position,
            score: 300,
            ply: 40,
            result: 0,
        };
        let race = record(crate::search::throne_race_positions()[0]);
        let other = record(parse_fen(&bench_fens()[0]).unwrap());
        let mut settings = settings();
        assert_eq!(settings.result_weight_of(&race), 0.25);
        settings.throne_race_result_weight = Some(1.0);
        assert_eq!(settings.result_weight_of(&race), 1.0);
        assert_eq!(settings.result_weight_of(&other), 0.25);
        let race_target = Sample::new(&race, settings.result_weight_of(&race)).target;
        assert_eq!(race_target, 0.0);
        let other_target = Sample::new(&other, settings.result_weight_of(&other)).target;
        assert!((other_target - 0.75 * sigmoid(300.0 / SCALE as f32)).abs() < 1e-6);
    }
}
