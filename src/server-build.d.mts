// The types of server-build.mjs, which runs before any TypeScript loader (it builds the server).
export declare const BUILT_SERVER: string;
export declare const SERVER_NODE_FLAGS: readonly string[];
export declare function builtServer(): Promise<string>;
export declare function buildBundle(entry: string, outfile: string, modified?: Date): Promise<void>;
