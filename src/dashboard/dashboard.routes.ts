import { statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';

export interface DashboardOptions {
  /** The built bundle (`npm run build:dashboard`); default `src/dashboard/dist`. */
  root?: string;
}

// From the package's root: this module runs from src/dashboard/ and, built into the server's one
// file (src/server-build.mjs), from dist/server/, both two folders down.
const DEFAULT_ROOT = fileURLToPath(new URL('../../src/dashboard/dist/', import.meta.url));

// Paths that belong to the API and its documentation: never answered with the dashboard.
const NOT_DASHBOARD = /^\/(api|docs|openapi\.json|health)(\/|$|\?)/;

/**
 * A router constraint that keeps the dashboard's catch-all route away from API paths: an unknown
 * `/api/...` path then finds no route at all and gets the API scope's own 404 (after its auth
 * hook), exactly as if the dashboard were not there.
 */
const dashboardPathConstraint = {
  name: 'dashboardPath',
  storage<Handler>() {
    const handlers = new Map<string, Handler>();
    return {
      get: (value: string) => handlers.get(value) ?? null,
      set: (value: string, handler: Handler) => void handlers.set(value, handler),
    };
  },
  deriveConstraint: (request: { url?: string }) => (NOT_DASHBOARD.test(request.url ?? '/') ? 'api' : 'page'),
};

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Warmup</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 36rem; margin: 4rem auto; line-height: 1.5; color: #1d2433">
<h1 style="font-size: 1.25rem">The dashboard has not been built</h1>
<p>Build it with <code>npm run build:dashboard</code> (<code>npm start</code> does this for you), then reload.
The API is running: see <a href="/docs">/docs</a>.</p>
</body></html>`;

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

function acceptsHtml(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '').includes('text/html');
}

/**
 * Serves the web dashboard: the built files, and `index.html` for any other page a browser asks
 * for (the dashboard routes in the browser, so `/mailboxes/abc` must load it too). Everything else
 * falls through to the app's 404, so unknown API paths still answer problem+json.
 */
export function dashboardRoutes(options: DashboardOptions = {}): FastifyPluginAsync {
  const root = path.resolve(options.root ?? DEFAULT_ROOT);

  return async (app) => {
    if (!app.hasConstraintStrategy(dashboardPathConstraint.name)) app.addConstraintStrategy(dashboardPathConstraint);
    await app.register(fastifyStatic, { root, serve: false, index: false });

    function sendIndex(reply: FastifyReply) {
      if (!isFile(path.join(root, 'index.html'))) {
        return reply.code(503).type('text/html; charset=utf-8').send(NOT_BUILT_PAGE);
      }
      // The page names the hashed bundle files, so it must be revalidated on every load.
      return reply.header('cache-control', 'no-cache').sendFile('index.html', { cacheControl: false });
    }

    app.get('/', { schema: { hide: true } }, (_request, reply) => sendIndex(reply));

    app.get('/*', { schema: { hide: true }, constraints: { dashboardPath: 'page' } }, (request, reply) => {
      const pathname = request.url.split('?')[0] ?? '/';
      let relative: string;
      try {
        relative = decodeURIComponent(pathname).replace(/^\/+/, '');
      } catch {
        return reply.callNotFound();
      }
      const file = path.resolve(root, relative);
      if (file.startsWith(root + path.sep) && path.basename(file) !== 'index.html' && isFile(file)) {
        // Vite names bundle files by content hash, so they never change under the same name.
        const hashed = relative.startsWith('assets/');
        return reply.sendFile(relative, { maxAge: hashed ? 365 * 24 * 3600 * 1000 : 3600 * 1000, immutable: hashed });
      }
      return acceptsHtml(request) ? sendIndex(reply) : reply.callNotFound();
    });
  };
}
