//! Who a request acts as. A handler that touches a store takes an [`Authorized`] (the bearer
//! token and the [`Target`] its path names, both checked before the handler runs) and reaches
//! the stores only through [`Slots::run_as`](crate::slots::Slots::run_as), which checks the
//! token's grant for that target first: a new route cannot forget authorization, and every
//! refusal is an [`ApiError`] made here.

use crate::error::ApiError;
use crate::request;
use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use workmem_store::db::Grants;
use workmem_store::db::{self, Access, Scope};
use workmem_store::{Session, Sessions};

/// What a route acts on, named by its path, and what a token's grant for it gives.
pub trait Target: DeserializeOwned + Clone + Send + 'static {
    /// What the handler gets once the grant is checked: the token's agent, and for a
    /// session the session itself.
    type Grant: Send + 'static;

    /// The grant `token` holds for this target with `access`, or why it holds none.
    fn authorize(&self, grants: &mut Grants, sessions: &Sessions, token: &str, access: Access) -> Result<Self::Grant, ApiError>;
}

/// `{board}`: the token's grant is for this board.
#[derive(Deserialize, Clone)]
pub struct Board {
    pub board: String,
}

/// `{vault}`: the token's grant is for this vault.
#[derive(Deserialize, Clone)]
pub struct Vault {
    pub vault: String,
}

/// `{session}`: the token's grant is for the session of this ID, named by ID, never by path.
#[derive(Deserialize, Clone)]
pub struct SessionId {
    pub session: String,
}

fn agent(grants: &mut Grants, token: &str, scope: Scope<'_>, access: Access) -> Result<String, ApiError> {
    Ok(match access {
        Access::Read => grants.authorize(token, scope)?,
        Access::Write => grants.authorize_write(token, scope)?,
    })
}

impl Target for Board {
    type Grant = String;
    fn authorize(&self, grants: &mut Grants, _: &Sessions, token: &str, access: Access) -> Result<String, ApiError> {
        agent(grants, token, Scope::Board(&self.board), access)
    }
}

impl Target for Vault {
    type Grant = String;
    fn authorize(&self, grants: &mut Grants, _: &Sessions, token: &str, access: Access) -> Result<String, ApiError> {
        agent(grants, token, Scope::Vault(&self.vault), access)
    }
}

/// The longest a request waits for a session another writer holds (`workmem update` waiting
/// on its model held one for minutes, and four page reads behind it took every slot); then
/// 503 `busy` with `retry-after`.
pub const SESSION_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

impl Target for SessionId {
    type Grant = (String, Session);
    /// The one directory the grant names, whatever directory the server runs in, and only
    /// while it is the session granted (not one made since with its ID); anything else is
    /// forbidden, naming no path.
    fn authorize(&self, grants: &mut Grants, sessions: &Sessions, token: &str, access: Access) -> Result<(String, Session), ApiError> {
        let (agent, name) = grants.authorize_session(token, &self.session, access)?;
        let session = sessions
            .grants()
            .and_then(|g| g.open_granted(&name))
            .map_err(|_| ApiError::from(db::Error::Forbidden(Scope::Session(&self.session).to_string())))?;
        Ok((agent, session.waiting_at_most(SESSION_LOCK_WAIT)))
    }
}

/// A request's bearer token and the target its path names, not yet checked against a grant
/// (that takes a database handle: [`Slots::run_as`](crate::slots::Slots::run_as)).
#[derive(Clone)]
pub struct Authorized<T> {
    token: String,
    pub target: T,
}

impl<T> Authorized<T> {
    pub(crate) fn token(&self) -> &str {
        &self.token
    }
}

impl<S: Send + Sync, T: Target> FromRequestParts<S> for Authorized<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let token = bearer(&parts.headers)?;
        let target = request::path(Path::<T>::from_request_parts(parts, state).await)?;
        Ok(Authorized { token, target })
    }
}

/// The token of `Authorization: Bearer TOKEN`.
fn bearer(headers: &HeaderMap) -> Result<String, ApiError> {
    let unauthorized = |why: &str| ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", why.to_string());
    let value = headers
        .get(header::AUTHORIZATION)
        .ok_or_else(|| unauthorized("this route needs a token: send Authorization: Bearer TOKEN (workmem doc|board|session grant issues one)"))?;
    let value = value.to_str().map_err(|_| unauthorized("the Authorization header is not text"))?;
    match value.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() => Ok(token.trim().to_string()),
        _ => Err(unauthorized("the Authorization header must be Bearer TOKEN")),
    }
}
