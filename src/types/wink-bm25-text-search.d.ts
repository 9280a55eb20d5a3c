declare module 'wink-bm25-text-search' {
  interface WinkBm25 {
    defineConfig(config: { fldWeights: Record<string, number>; bm25Params?: { k1?: number; b?: number; k?: number } }): boolean
    definePrepTasks(tasks: Array<(input: string) => unknown>, field?: string): number
    addDoc(doc: Record<string, string>, id: string): number
    consolidate(precision?: number): boolean
    search(text: string, limit?: number): Array<[string, number]>
    exportJSON(): string
    importJSON(json: string): boolean
    getTotalDocs(): number
  }
  function bm25(): WinkBm25
  export default bm25
}
