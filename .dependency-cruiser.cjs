/**
 * The import rules of recall, checked by test/architecture/import-rules.test.ts (`npx depcruise -c
 * .dependency-cruiser.cjs src adapters`). Arrows point down:
 *
 *   src/http (app, server, routes, plugins, schemas)  ->  src/corpus (ingest, document library, demo loaders)
 *     ->  src/modes.ts (the registry)  ->  adapters/<mode>  ->  src/providers/<port>/port.ts  ->  src/kernel
 *
 * Each rule below says why it exists. There are no exceptions: a rule that needs one is a design to fix.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No file may reach itself through its imports: a cycle makes load order matter and hides which layer owns what.',
      from: {},
      to: { circular: true }
    },
    {
      name: 'providers-below-modes',
      severity: 'error',
      comment: 'A backend (port or implementation) knows nothing of modes, routes, the corpus or the service: a type both need lives with the port.',
      from: { path: '^src/providers/' },
      to: { path: '^(adapters/|src/(routes|plugins|schemas|ingest|cli)/|src/(app|server|services|modes|retrieval|comparison|demo|startup|request-filter)\\.ts$)' }
    },
    {
      name: 'adapters-import-ports-and-kernel-only',
      severity: 'error',
      comment: 'A mode adapter sees its backends through their ports (and the kernel: analyzer, errors, namespace, leg report), never a concrete backend, the HTTP layer or the corpus.',
      from: { path: '^adapters/' },
      to: {
        path: '^src/',
        pathNot: '^src/(kernel/|text/|providers/(errors|namespace)\\.ts$|providers/[^/]+/(port|projection|fragment|collections|filter)\\.ts$)'
      }
    },
    {
      name: 'adapters-do-not-import-each-other',
      severity: 'error',
      comment: 'Each mode is one module: what two modes share lives in adapters/ root files (definition, leg runner, types).',
      from: { path: '^adapters/([^/]+)/' },
      to: { path: '^adapters/[^/]+/', pathNot: '^adapters/$1/' }
    },
    {
      name: 'kernel-imports-nothing-of-ours',
      severity: 'error',
      comment: 'The kernel (analyzer, document fields, leg report) is imported by every layer and imports none.',
      from: { path: '^src/(kernel|text)/' },
      to: { path: '^(src|adapters)/', pathNot: '^src/(kernel|text)/' }
    }
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a type is a dependency on the module that owns it.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    moduleSystems: ['es6'],
    exclude: { path: '^(node_modules|dist)/' }
  }
}
