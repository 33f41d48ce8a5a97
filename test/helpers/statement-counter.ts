import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';

/**
 * Counts the statements a database handle runs and the rows they return or change: give it to
 * `db.withPlugin(…)`, run the work, read the counts (the claims test bounds them, the claims bench reports them).
 */
export class StatementCounter implements KyselyPlugin {
  statements = 0;
  rows = 0;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.statements += 1;
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    this.rows += args.result.rows.length + Number(args.result.numAffectedRows ?? 0);
    return args.result;
  }
}
