// Apache Lucene 9.12 beside recall's lexical index, driven by bench/lexical.ts over stdin: the same corpus,
// the same queries, CJKAnalyzer and BM25Similarity(1.2, 0.75), one thread. Each command prints one JSON line.
//
//   load <corpus.tsv>                 id TAB text per line; builds an index in memory (ByteBuffersDirectory)
//   queries <queries.txt> <limit>     times analysis + top-<limit> search per query line (microseconds)
//   ids <queries.txt> <limit> <out>   writes the top ids of each query, one line per query, tab-separated
//   add <id> TAB <text>               adds one document and reopens the near-real-time reader; times both
//   analyze <text>                    CJKAnalyzer's tokens of the text, as a JSON array (to check the analyzer)
//   quit
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.lucene.analysis.cjk.CJKAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.util.QueryBuilder;

public class LuceneBench {
  static final CJKAnalyzer ANALYZER = new CJKAnalyzer();
  static final BM25Similarity SIMILARITY = new BM25Similarity(1.2f, 0.75f);
  static ByteBuffersDirectory dir;
  static IndexWriter writer;
  static DirectoryReader reader;
  static IndexSearcher searcher;

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintWriter out = new PrintWriter(System.out, true, StandardCharsets.UTF_8);
    out.println("{\"ready\":true,\"lucene\":\"" + org.apache.lucene.util.Version.LATEST + "\",\"java\":\"" + System.getProperty("java.version") + "\"}");
    String line;
    while ((line = in.readLine()) != null) {
      int space = line.indexOf(' ');
      String op = space < 0 ? line : line.substring(0, space);
      String rest = space < 0 ? "" : line.substring(space + 1);
      switch (op) {
        case "load" -> out.println(load(Path.of(rest)));
        case "queries" -> {
          String[] a = rest.split(" ");
          out.println(queries(Path.of(a[0]), Integer.parseInt(a[1])));
        }
        case "ids" -> {
          String[] a = rest.split(" ");
          out.println(ids(Path.of(a[0]), Integer.parseInt(a[1]), Path.of(a[2])));
        }
        case "add" -> out.println(add(rest));
        case "analyze" -> out.println(analyze(rest));
        case "quit" -> { return; }
        default -> out.println("{\"error\":\"unknown command " + op + "\"}");
      }
    }
  }

  static String analyze(String text) throws Exception {
    StringBuilder json = new StringBuilder("[");
    try (org.apache.lucene.analysis.TokenStream ts = ANALYZER.tokenStream("body", text)) {
      org.apache.lucene.analysis.tokenattributes.CharTermAttribute term = ts.addAttribute(org.apache.lucene.analysis.tokenattributes.CharTermAttribute.class);
      ts.reset();
      while (ts.incrementToken()) {
        if (json.length() > 1) json.append(',');
        json.append('"');
        for (char c : term.toString().toCharArray()) {
          if (c == '"' || c == '\\') json.append('\\');
          json.append(c);
        }
        json.append('"');
      }
      ts.end();
    }
    return json.append(']').toString();
  }

  static Document document(String id, String text) {
    Document doc = new Document();
    doc.add(new StringField("id", id, Field.Store.YES));
    doc.add(new TextField("body", text, Field.Store.NO));
    return doc;
  }

  static String load(Path corpus) throws Exception {
    if (writer != null) { reader.close(); writer.close(); }
    long started = System.nanoTime();
    dir = new ByteBuffersDirectory();
    IndexWriterConfig config = new IndexWriterConfig(ANALYZER).setSimilarity(SIMILARITY).setRAMBufferSizeMB(256);
    writer = new IndexWriter(dir, config);
    int n = 0;
    for (String row : Files.readAllLines(corpus, StandardCharsets.UTF_8)) {
      int tab = row.indexOf('\t');
      writer.addDocument(document(row.substring(0, tab), row.substring(tab + 1)));
      n++;
    }
    writer.commit();
    reader = DirectoryReader.open(writer);
    searcher = new IndexSearcher(reader);
    searcher.setSimilarity(SIMILARITY);
    double ms = (System.nanoTime() - started) / 1e6;
    long bytes = 0;
    for (String f : dir.listAll()) bytes += dir.fileLength(f);
    return "{\"op\":\"load\",\"docs\":" + n + ",\"ms\":" + ms + ",\"index_bytes\":" + bytes + ",\"segments\":" + reader.leaves().size() + "}";
  }

  static Query parse(String text) {
    return new QueryBuilder(ANALYZER).createBooleanQuery("body", text);
  }

  static String queries(Path file, int limit) throws Exception {
    List<String> qs = Files.readAllLines(file, StandardCharsets.UTF_8);
    StringBuilder times = new StringBuilder();
    long hits = 0;
    for (String q : qs) {
      long t0 = System.nanoTime();
      Query query = parse(q);
      if (query != null) hits += searcher.search(query, limit).scoreDocs.length;
      long us = (System.nanoTime() - t0) / 1000;
      if (times.length() > 0) times.append(',');
      times.append(us);
    }
    return "{\"op\":\"queries\",\"hits\":" + hits + ",\"us\":[" + times + "]}";
  }

  static String ids(Path file, int limit, Path outFile) throws Exception {
    List<String> lines = new ArrayList<>();
    for (String q : Files.readAllLines(file, StandardCharsets.UTF_8)) {
      Query query = parse(q);
      StringBuilder row = new StringBuilder();
      if (query != null) {
        for (ScoreDoc sd : searcher.search(query, limit).scoreDocs) {
          if (row.length() > 0) row.append('\t');
          row.append(searcher.storedFields().document(sd.doc).get("id"));
        }
      }
      lines.add(row.toString());
    }
    Files.write(outFile, lines, StandardCharsets.UTF_8);
    return "{\"op\":\"ids\",\"queries\":" + lines.size() + "}";
  }

  static String add(String row) throws Exception {
    int tab = row.indexOf('\t');
    String id = row.substring(0, tab);
    long t0 = System.nanoTime();
    writer.updateDocument(new Term("id", id), document(id, row.substring(tab + 1)));
    long t1 = System.nanoTime();
    DirectoryReader next = DirectoryReader.openIfChanged(reader, writer);
    if (next != null) {
      reader.close();
      reader = next;
      searcher = new IndexSearcher(reader);
      searcher.setSimilarity(SIMILARITY);
    }
    long t2 = System.nanoTime();
    TopDocs found = searcher.search(new org.apache.lucene.search.TermQuery(new Term("id", id)), 1);
    long t3 = System.nanoTime();
    return "{\"op\":\"add\",\"add_ms\":" + (t1 - t0) / 1e6 + ",\"reopen_ms\":" + (t2 - t1) / 1e6
        + ",\"searchable_ms\":" + (t3 - t0) / 1e6 + ",\"found\":" + (found.totalHits.value > 0) + "}";
  }
}
