import { Link, PageHeader } from '../components/ui.js';
import { useTitle } from '../hooks.js';

export function NotFoundPage() {
  useTitle('Not found');
  return (
    <PageHeader
      title="This page does not exist"
      subtitle="The address may be mistyped, or the item was deleted."
      actions={
        <Link to="/" class="btn btn-primary">
          Go to the overview
        </Link>
      }
    />
  );
}
