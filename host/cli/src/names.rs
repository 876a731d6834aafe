//! clap value parsers over the runtime's name tables (`workmem_runtime::names`): the CLI
//! shows a case in snake_case, as the board's JSON spells it, and takes the WIT file's
//! kebab-case as well.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use std::sync::Arc;
use workmem_runtime::names::{self, Named};

/// One of `choices`, by name.
#[derive(Clone)]
pub struct Choices<T>(Arc<Vec<(&'static str, T)>>);

/// Every case of a WIT enum.
pub fn named<T: Named>() -> Choices<T> {
    Choices(Arc::new(T::CASES.iter().map(|(case, name)| (*name, *case)).collect()))
}

impl<T> Choices<T> {
    pub fn new(choices: Vec<(&'static str, T)>) -> Self {
        Choices(Arc::new(choices))
    }

    fn shown(&self) -> impl Iterator<Item = PossibleValue> + '_ {
        self.0.iter().map(|(name, _)| PossibleValue::new(name.replace('-', "_")).alias(*name))
    }
}

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Choices<T> {
    type Value = T;

    fn parse_ref(&self, cmd: &clap::Command, arg: Option<&clap::Arg>, value: &std::ffi::OsStr) -> Result<T, clap::Error> {
        let found = value.to_str().and_then(|given| self.0.iter().find(|(name, _)| names::matches(name, given)));
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
