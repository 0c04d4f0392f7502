//! Sessions: an agent's working session, whose id it passes when storing.

use levh_core::{Levh, Scope, SessionId};

use crate::Result;
use crate::views::SessionView;

/// [`Operation::CreateSession`](crate::Operation::CreateSession).
pub fn create(levh: &Levh, scope: &Scope, project: Option<String>) -> Result<SessionView> {
    Ok(SessionView::from(&levh.create_session(scope, project)?))
}

/// [`Operation::EndSession`](crate::Operation::EndSession): ending twice keeps the first
/// end.
pub fn end(levh: &Levh, scope: &Scope, id: String) -> Result<SessionView> {
    Ok(SessionView::from(
        &levh.end_session(scope, &SessionId::new(id))?,
    ))
}
