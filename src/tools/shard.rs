//! Shards: one long job (a match, data generation) split into `N` parts
//! that run on many machines at once, given as `K/N` or read from the
//! array index of the scheduler that started the process.

use std::fmt;
use std::path::{Path, PathBuf};

/// Part `number` (1-based) of `count` parts of a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// 0-based index, below `count`.
    index: u64,
    /// Parts in all, at least 1.
    count: u64,
}

/// A shard specification that cannot be used, with the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardError(pub String);

impl fmt::Display for ShardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ShardError {}

/// The accepted forms, for messages and help texts.
pub const SHARD_FORMS: &str = "K/N (1 <= K <= N), auto/N (K from the environment: a Slurm \
     array task id, a Kubernetes Indexed Job or AGON_SHARD_INDEX) or auto (a whole Slurm job array)";

impl Default for Shard {
    fn default() -> Shard {
        Shard::WHOLE
    }
}

impl Shard {
    /// The whole job, unsplit.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Part `number` (1-based) of `count`.
    pub fn new(number: u64, count: u64) -> Result<Shard, ShardError> {
        if count == 0 || number == 0 || number > count {
            return Err(ShardError(format!(
                "shard {number}/{count}: the part must be from 1 to the count, the count at least 1"
            )));
        }
        Ok(Shard {
            index: number - 1,
            count,
        })
    }

    /// Reads `K/N`, `auto` or `auto/N` with the process's environment.
    pub fn parse(text: &str) -> Result<Shard, ShardError> {
        Shard::parse_with(text, |name| std::env::var(name).ok())
    }

    /// Reads `K/N`, `auto` or `auto/N`, looking variables up with `var`.
    ///
    /// `auto/N` takes the part from the environment and the count from the
    /// command line, so a rerun of any one part, alone or in a list, is
    /// that same part: a Slurm array task id is the 1-based part number
    /// (`sbatch --array=1-N`, and `--array=3` reruns part 3);
    /// `JOB_COMPLETION_INDEX` (a Kubernetes Indexed Job) and
    /// `AGON_SHARD_INDEX` are 0-based indices. `auto` takes both from a
    /// Slurm job array as first submitted whole: the task's place in the
    /// array (`SLURM_ARRAY_TASK_ID`, `_MIN`, `_STEP`) of `_COUNT` tasks; an
    /// array of one task is refused, being most likely one part run again.
    pub fn parse_with(
        text: &str,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Shard, ShardError> {
        let bad = || ShardError(format!("shard '{text}' is not {SHARD_FORMS}"));
        let (part, count) = text
            .split_once('/')
            .map_or((text, None), |(p, c)| (p, Some(c)));
        let count = count.map(|c| number(c).ok_or_else(bad)).transpose()?;
        if part != "auto" {
            return Shard::new(number(part).ok_or_else(bad)?, count.ok_or_else(bad)?);
        }
        let read = |name: &str| -> Result<Option<u64>, ShardError> {
            var(name)
                .map(|value| {
                    number(value.trim()).ok_or_else(|| {
                        ShardError(format!("{name}='{value}' is not a whole number"))
                    })
                })
                .transpose()
        };
        let slurm_id = read("SLURM_ARRAY_TASK_ID")?;
        let Some(count) = count else {
            return Shard::from_whole_slurm_array(text, slurm_id, read);
        };
        let number = if let Some(id) = slurm_id {
            if id == 0 || id > count {
                return Err(ShardError(format!(
                    "-shard {text}: SLURM_ARRAY_TASK_ID {id} is not a part number from 1 to \
                     {count} (submit the array as --array=1-{count})"
                )));
            }
            id
        } else if let Some(index) = read("JOB_COMPLETION_INDEX")?.or(read("AGON_SHARD_INDEX")?) {
            index.checked_add(1).ok_or_else(bad)?
        } else {
            return Err(ShardError(format!(
                "-shard {text}: no array index in the environment (SLURM_ARRAY_TASK_ID, \
                 JOB_COMPLETION_INDEX or AGON_SHARD_INDEX)"
            )));
        };
        Shard::new(number, count).map_err(|e| ShardError(format!("-shard {text}: {e}")))
    }

    /// `-shard auto`: the task's place in a whole Slurm job array.
    fn from_whole_slurm_array(
        text: &str,
        id: Option<u64>,
        read: impl Fn(&str) -> Result<Option<u64>, ShardError>,
    ) -> Result<Shard, ShardError> {
        let Some(id) = id else {
            return Err(ShardError(format!(
                "-shard {text}: no Slurm job array in the environment (SLURM_ARRAY_TASK_ID); \
                 elsewhere give the count: auto/N"
            )));
        };
        let Some(count) = read("SLURM_ARRAY_TASK_COUNT")? else {
            return Err(ShardError(format!(
                "-shard {text}: the environment gives an index but no count; use auto/N"
            )));
        };
        if count == 1 {
            return Err(ShardError(format!(
                "-shard {text}: the job array has a single task (one part run again?): \
                 give the count, -shard auto/N, which reads the part from the task id"
            )));
        }
        let min = read("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
        let step = read("SLURM_ARRAY_TASK_STEP")?.unwrap_or(1).max(1);
        let offset = id.checked_sub(min).ok_or_else(|| {
            ShardError(format!(
                "SLURM_ARRAY_TASK_ID {id} is below SLURM_ARRAY_TASK_MIN {min}"
            ))
        })?;
        Shard::new(offset / step + 1, count).map_err(|e| {
            ShardError(format!(
                "-shard {text}: {e} (task {id} of an array from {min} by {step}; \
                 for a list of task ids use auto/N)"
            ))
        })
    }

    /// 1-based part number.
    pub fn number(self) -> u64 {
        self.index + 1
    }

    /// Parts in all.
    pub fn count(self) -> u64 {
        self.count
    }

    /// Whether this is the whole job.
    pub fn is_whole(self) -> bool {
        self.count == 1
    }

    /// Whether work unit `unit` (numbered from 0 over the whole job) is this
    /// shard's: units are dealt out in turn, so every shard gets an even
    /// share of every stretch of the job.
    pub fn owns(self, unit: u64) -> bool {
        unit % self.count == self.index
    }

    /// `path` with the shard in its name (`games.jsonl` becomes
    /// `games.shard-2-of-4.jsonl`), so that every shard of a job started
    /// with one command line writes its own files; the whole job's path is
    /// left as it is.
    pub fn file_name(self, path: &Path) -> PathBuf {
        if self.is_whole() {
            return path.to_path_buf();
        }
        let number = self.number();
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
        let mut name = format!(
            "{}.shard-{number}-of-{}",
            stem.unwrap_or_default(),
            self.count
        );
        if let Some(extension) = path.extension() {
            name.push('.');
            name.push_str(&extension.to_string_lossy());
        }
        path.with_file_name(name)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.number(), self.count)
    }
}

fn number(text: &str) -> Option<u64> {
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        }
    }

    #[test]
    fn explicit_shards_are_one_based() {
        let shard = Shard::parse_with("2/4", env(&[])).unwrap();
        assert_eq!((shard.number(), shard.count()), (2, 4));
        assert_eq!(shard.to_string(), "2/4");
        assert!(shard.owns(1) && shard.owns(5) && !shard.owns(2));
        for bad in [
            "0/4",
            "5/4",
            "1/0",
            "x/2",
            "2",
            "",
            "/",
            "-1/4",
            "1/18446744073709551616",
        ] {
            let error = Shard::parse_with(bad, env(&[])).unwrap_err();
            assert!(!error.0.is_empty(), "{bad}");
        }
    }

    #[test]
    fn every_unit_has_exactly_one_shard() {
        let shards: Vec<Shard> = (1..=3).map(|k| Shard::new(k, 3).unwrap()).collect();
        for unit in 0..100 {
            assert_eq!(shards.iter().filter(|s| s.owns(unit)).count(), 1);
        }
        assert!((0..10).all(|unit| Shard::WHOLE.owns(unit)));
    }

    #[test]
    fn job_arrays_give_the_index() {
        let slurm = [
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ];
        assert_eq!(
            Shard::parse_with("auto", env(&slurm)),
            Ok(Shard::new(3, 4).unwrap())
        );
        assert_eq!(
            Shard::parse_with("auto/4", env(&slurm)),
            Ok(Shard::new(3, 4).unwrap())
        );
        let from_zero = [
            ("SLURM_ARRAY_TASK_ID", "0"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ];
        assert_eq!(
            Shard::parse_with("auto", env(&from_zero)),
            Ok(Shard::new(1, 4).unwrap())
        );
        let error = Shard::parse_with("auto/4", env(&from_zero)).unwrap_err();
        assert!(error.0.contains("--array=1-4"), "{error}");
        let stepped = [
            ("SLURM_ARRAY_TASK_ID", "4"),
            ("SLURM_ARRAY_TASK_STEP", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
        ];
        assert_eq!(
            Shard::parse_with("auto", env(&stepped)),
            Ok(Shard::new(3, 3).unwrap())
        );
        let kubernetes = [("JOB_COMPLETION_INDEX", "0")];
        assert_eq!(
            Shard::parse_with("auto/8", env(&kubernetes)),
            Ok(Shard::new(1, 8).unwrap())
        );
        assert!(Shard::parse_with("auto", env(&kubernetes)).is_err());
        assert!(Shard::parse_with("auto/8", env(&[("JOB_COMPLETION_INDEX", "8")])).is_err());
        assert_eq!(
            Shard::parse_with("auto/8", env(&[("AGON_SHARD_INDEX", "7")])),
            Ok(Shard::new(8, 8).unwrap())
        );
        assert!(Shard::parse_with("auto/8", env(&[("AGON_SHARD_INDEX", "x")])).is_err());
        assert!(Shard::parse_with("auto/8", env(&[])).is_err());
    }

    #[test]
    fn a_rerun_task_or_a_list_of_tasks_keeps_its_part_with_auto_n() {
        // sbatch --array=3: one task, its id the part to play again.
        let rerun = [
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_MIN", "3"),
            ("SLURM_ARRAY_TASK_MAX", "3"),
            ("SLURM_ARRAY_TASK_COUNT", "1"),
        ];
        assert_eq!(
            Shard::parse_with("auto/16", env(&rerun)),
            Ok(Shard::new(3, 16).unwrap())
        );
        let error = Shard::parse_with("auto", env(&rerun)).unwrap_err();
        assert!(error.0.contains("auto/N"), "{error}");
        // sbatch --array=1,2,5,9
        for id in [1, 2, 5, 9] {
            let id = id.to_string();
            let listed = [
                ("SLURM_ARRAY_TASK_ID", id.as_str()),
                ("SLURM_ARRAY_TASK_MIN", "1"),
                ("SLURM_ARRAY_TASK_MAX", "9"),
                ("SLURM_ARRAY_TASK_COUNT", "4"),
            ];
            let shard = Shard::parse_with("auto/9", env(&listed)).unwrap();
            assert_eq!((shard.number().to_string(), shard.count()), (id, 9));
        }
        let beyond = [("SLURM_ARRAY_TASK_ID", "17")];
        assert!(Shard::parse_with("auto/16", env(&beyond)).is_err());
    }

    #[test]
    fn shard_files_are_named_after_the_shard() {
        let shard = Shard::new(2, 4).unwrap();
        assert_eq!(
            shard.file_name(Path::new("out/games.jsonl")),
            Path::new("out/games.shard-2-of-4.jsonl")
        );
        assert_eq!(
            shard.file_name(Path::new("state")),
            Path::new("state.shard-2-of-4")
        );
        assert_eq!(
            Shard::WHOLE.file_name(Path::new("games.pgn")),
            Path::new("games.pgn")
        );
    }
}
