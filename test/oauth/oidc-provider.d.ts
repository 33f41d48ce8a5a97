// The few parts of oidc-provider (a test-only devDependency without bundled types) the stand-in uses.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    on(event: string, listener: (ctx: unknown, error: Error) => void): this;
  }
}
