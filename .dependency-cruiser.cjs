/**
 * The import rules of recall, checked by test/architecture/import-rules.test.ts (`npx depcruise -c
 * .dependency-cruiser.cjs src adapters`). Arrows point down:
 *
 *   src/http (app, server, routes, plugins, MCP)  ->  src/runtime.ts (what the HTTP layer is given)
 *     ->  src/corpus (ingest, document library, demo loaders, namespaces)  ->  src/modes.ts (the registry)  ->  adapters/<mode>  ->  src/providers/<port>/port.ts  ->  src/kernel
 *
 * src/schemas holds the request and response schemas that the HTTP layer, the corpus's validators and the CLI share.
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
      to: { path: '^(adapters/|src/(http|corpus|schemas|cli|context|evaluation)/|src/(services|runtime|modes|retrieval|comparison|startup|request-filter|generations|retrieval-defaults)\\.ts$)' }
    },
    {
      name: 'adapters-import-ports-and-kernel-only',
      severity: 'error',
      comment: 'A mode adapter sees its backends through their ports (and the kernel: analyzer, errors, namespace, leg report), never a concrete backend, the HTTP layer or the corpus.',
      from: { path: '^adapters/' },
      to: {
        path: '^src/',
        pathNot: '^src/(kernel/|providers/(errors|namespace)\\.ts$|providers/[^/]+/(port|projection|fragment|collections|filter|payload)\\.ts$)'
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
      name: 'derivation-is-pure',
      severity: 'error',
      comment: 'src/derive turns a document\'s chunks into graph contributions with no I/O: it reads the kernel and port types only, so the same chunks always derive the same contributions.',
      from: { path: '^src/derive/' },
      to: { path: '^(src|adapters)/', pathNot: '^src/(derive/|kernel/|providers/[^/]+/port\\.ts$)' }
    },
    {
      name: 'http-on-top',
      severity: 'error',
      comment: 'Only the HTTP layer (and the CLI that starts it) imports src/http: the corpus, modes, providers and kernel never depend on routes or plugins.',
      from: { path: '^(src/(corpus|providers|kernel|schemas|context|evaluation)/|adapters/|src/(services|runtime|modes|retrieval|comparison|startup|request-filter|generations|retrieval-defaults|config|errors)\\.ts$)' },
      to: { path: '^src/http/' }
    },
    {
      name: 'http-is-given-the-runtime',
      severity: 'error',
      comment: 'Routes, plugins and MCP tools read the runtime (src/runtime.ts) that the composition root builds, never the services behind it: only the process entry (src/http/server.ts) builds the services.',
      from: { path: '^src/http/', pathNot: '^src/http/server\\.[jt]s$' },
      to: { path: '^src/services\\.[jt]s$' }
    },
    {
      name: 'appliers-only-through-the-write-path',
      comment: 'The appliers write the stores (one per kind of change); only the write path (src/corpus/write-path.ts) calls them, after it caught up, locked and journalled, and before it records the write: any other importer would be a second door (docs/write-path.md). The writers under appliers/writers/ are theirs.',
      severity: 'error',
      from: { path: '^(src|adapters)/', pathNot: '^src/corpus/(write-path\\.[jt]s$|appliers/)' },
      to: { path: '^src/corpus/appliers/', pathNot: '^src/corpus/appliers/writers/document-catch-up\\.[jt]s$' }
    },
    {
      name: 'catch-up-through-the-shared-catalog',
      comment: 'The catch-up of the documents another replica wrote writes this replica\'s catalog, so it is a writer; it is step 1 of every write and also runs before every read (a read sees the other replicas\' writes), one at a time per namespace at the version read: the shared catalog (src/corpus/shared-catalog.ts) runs it for both, besides the write path and the appliers.',
      severity: 'error',
      from: { path: '^(src|adapters)/', pathNot: '^src/corpus/(write-path\\.[jt]s$|shared-catalog\\.[jt]s$|appliers/)' },
      to: { path: '^src/corpus/appliers/writers/document-catch-up\\.[jt]s$' }
    },
    {
      name: 'reader-state-for-the-reader-and-its-writers',
      comment: 'A reader that keeps state its writers change holds it under a symbol exported by a module of its own, which only the reader and the writers (src/corpus/appliers/writers/) import: what a document library holds in memory (documents/library-state.ts, read by documents/library.ts) and what the service knows of its namespaces\' model records (namespace-model-state.ts, read by namespace-models.ts). A module that could import one could change it around the write path.',
      severity: 'error',
      from: { path: '^(src|adapters)/', pathNot: '^src/corpus/(documents/library\\.[jt]s$|namespace-models\\.[jt]s$|appliers/writers/)' },
      to: { path: '^src/corpus/(documents/library-state|namespace-model-state)\\.[jt]s$' }
    },
    {
      name: 'kernel-imports-nothing-of-ours',
      severity: 'error',
      comment: 'The kernel (analyzer, document fields, leg report) is imported by every layer and imports none.',
      from: { path: '^src/kernel/' },
      to: { path: '^(src|adapters)/', pathNot: '^src/kernel/' }
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
