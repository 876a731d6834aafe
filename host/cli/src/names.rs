//! clap value parsers over the runtime's name tables (`workmem_runtime::names`): the CLI
//! shows a case in snake_case, as the board's JSON spells it, and takes the WIT file's
//! kebab-case as well.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use std::sync::Arc;
use workmem_runtime::names::{self, Named};

/// One of `choices`, by name; `snake` shows a WIT name in snake_case (taking its own too).
#[derive(Clone)]
pub struct Choices<T> {
    choices: Arc<Vec<(&'static str, T)>>,
    snake: bool,
}

/// Every case of a WIT enum.
pub fn named<T: Named>() -> Choices<T> {
    Choices::new(T::CASES.iter().map(|(case, name)| (*name, *case)).collect())
}

impl<T> Choices<T> {
    /// Cases of WIT names, shown in snake_case.
    pub fn new(choices: Vec<(&'static str, T)>) -> Self {
        Choices { choices: Arc::new(choices), snake: true }
    }

    /// Cases shown by their names as given.
    pub fn as_named(choices: Vec<(&'static str, T)>) -> Self {
        Choices { choices: Arc::new(choices), snake: false }
    }

    fn shown(&self) -> impl Iterator<Item = PossibleValue> + '_ {
        self.choices.iter().map(|(name, _)| if self.snake { PossibleValue::new(name.replace('-', "_")).alias(*name) } else { PossibleValue::new(*name) })
    }
}

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Choices<T> {
    type Value = T;

    fn parse_ref(&self, cmd: &clap::Command, arg: Option<&clap::Arg>, value: &std::ffi::OsStr) -> Result<T, clap::Error> {
        let found = value.to_str().and_then(|given| self.choices.iter().find(|(name, _)| names::matches(name, given)));
        match found {
            Some((_, case)) => Ok(case.clone()),
            // The refusal clap gives a value outside its list, naming the list.
            None => Err(PossibleValuesParser::new(self.shown())
                .parse_ref(cmd, arg, value)
                .err()
                .unwrap_or_else(|| clap::Error::new(clap::error::ErrorKind::InvalidValue))),
        }
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(self.shown()))
    }
}
