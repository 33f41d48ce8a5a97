import { ACTION_ROLES, rolesThatCan, useCan, useRole, type Action } from '../access.js';
import { useTitle } from '../hooks.js';
import { Card, EmptyState, Link, Notice, PageHeader } from './ui.js';

const ASK = 'Ask an admin of the workspace to change your role.';

/** Said once above every page for a role that can change nothing: the buttons it would use are hidden. */
export function ViewOnlyNotice() {
  const role = useRole();
  if (useCan('change')) return null;
  return (
    <div class="view-only-notice" data-testid="view-only-notice">
      <Notice title="View only">
        Your role in this workspace is {role}: you see everything, and changes are for {rolesThatCan('change')}. {ASK}
      </Notice>
    </div>
  );
}

/**
 * The page of an address whose purpose the role may not carry out ("Viewers cannot add
 * mailboxes"), in place of the page itself; the API would refuse its form anyway.
 */
export function NotAllowedPage({
  action,
  title,
  doing,
  back,
}: {
  action: Action;
  /** The page's own title, as the role that may use it sees it. */
  title: string;
  /** What the page is for, as a verb phrase: "add mailboxes". */
  doing: string;
  back: { to: string; label: string };
}) {
  const role = useRole();
  useTitle(title);
  const heading = `${role.charAt(0).toUpperCase()}${role.slice(1)}s cannot ${doing}`;
  return (
    <>
      <PageHeader title={title} back={back} />
      <Card class="not-allowed">
        <EmptyState
          title={heading}
          level={2}
          action={
            <Link to={back.to} class="btn">
              Back to {back.label.toLowerCase()}
            </Link>
          }
        >
          Only {rolesThatCan(action)} can {doing} here (the API asks for the {ACTION_ROLES[action]} role). {ASK}
        </EmptyState>
      </Card>
    </>
  );
}
