package dev.scorewire.client;

import com.google.gson.Strictness;
import com.google.gson.stream.JsonWriter;
import com.google.protobuf.ListValue;
import com.google.protobuf.NullValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.scorewire.v1.CheckSpec;
import dev.scorewire.v1.Output;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.lang.reflect.Array;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Map;

/**
 * Plain Java values (what a caller holds after parsing JSON or reading a table) as the
 * fields of scorewire's messages: {@link #value} for {@code Sample.input}, {@code
 * Sample.expected} and {@code Output.value}; {@link #json} for their JSON-text forms
 * {@code input_json}, {@code expected_json} and {@code value_json}; {@link #check} for a
 * structured check.
 *
 * <p>A plain value is {@code null}, a {@link Boolean}, a {@link Number}, a {@link
 * CharSequence} or {@link Character}, a {@link Map} with {@link String} keys, an {@link
 * Iterable} or an array of plain values. Anything else, and a non-finite number (NaN and
 * Infinity are not JSON), is an {@link IllegalArgumentException} naming where it sits
 * ({@code $.items[2].qty}).
 *
 * <pre>{@code
 * Sample.newBuilder().setId("s1").setExpectedJson(Values.json(Map.of("answer", "Paris")))
 * }</pre>
 */
public final class Values {
  private Values() {}

  /**
   * {@code v} as a {@code google.protobuf.Value}. A {@code Value} number is a double, so an
   * integer beyond 2^53 loses digits here; {@link #json} keeps every digit.
   *
   * @throws IllegalArgumentException when {@code v} is not a plain value
   */
  public static Value value(Object v) {
    try {
      return toValue(v);
    } catch (Bad e) {
      throw e.reported("value");
    }
  }

  /**
   * A map of plain values as a {@code google.protobuf.Struct} (a check's parameters, an
   * output's metadata).
   *
   * @throws IllegalArgumentException when a key is not a string or a value is not plain
   */
  public static Struct struct(Map<?, ?> fields) {
    try {
      return toStruct(fields);
    } catch (Bad e) {
      throw e.reported("struct");
    }
  }

  /**
   * {@code v} written as one JSON text, for {@code Sample.setInputJson}, {@code
   * setExpectedJson} and {@code Output.setValueJson}: the server parses one string instead
   * of reading a tree of {@code Value} messages, and integers ({@link Long}, {@link
   * BigInteger}) and {@link BigDecimal}s keep every digit. Set one form of a field, not
   * both: both is INVALID_ARGUMENT naming the field.
   *
   * @throws IllegalArgumentException when {@code v} is not a plain value
   */
  public static String json(Object v) {
    StringBuilderWriter out = new StringBuilderWriter();
    JsonWriter w = new JsonWriter(out);
    w.setStrictness(Strictness.STRICT); // refuses NaN and Infinity
    w.setHtmlSafe(false); // '<' stays '<', not \u003c: valid JSON either way, and shorter
    try {
      writeJson(w, v);
      w.flush();
    } catch (Bad e) {
      throw e.reported("json");
    } catch (IOException e) {
      throw new UncheckedIOException("writing to memory does not fail", e);
    }
    return out.toString();
  }

  /**
   * A structured check of type {@code type} with {@code params} (a map of plain values,
   * or {@code null} for none).
   *
   * @throws IllegalArgumentException naming the check type when a parameter is not plain
   */
  public static CheckSpec check(String type, Map<?, ?> params) {
    CheckSpec.Builder spec = CheckSpec.newBuilder().setType(type);
    if (params == null) {
      return spec.build();
    }
    try {
      return spec.setParams(toStruct(params)).build();
    } catch (Bad e) {
      throw e.reported("check " + type + " params");
    }
  }

  /** An output holding only its text. */
  public static Output text(String text) {
    return Output.newBuilder().setText(text).build();
  }

  // ---- to Value ---------------------------------------------------------------------

  private static Value toValue(Object v) {
    Value.Builder b = Value.newBuilder();
    if (v == null) {
      return b.setNullValue(NullValue.NULL_VALUE).build();
    }
    if (v instanceof String s) {
      return b.setStringValue(s).build();
    }
    if (v instanceof Number n) {
      double d = n.doubleValue();
      if (Double.isInfinite(d) && !(v instanceof Double || v instanceof Float)) {
        throw new Bad(n + " does not fit a Value's double; Values.json keeps it");
      }
      return b.setNumberValue(finite(n)).build();
    }
    if (v instanceof Boolean t) {
      return b.setBoolValue(t).build();
    }
    if (v instanceof Map<?, ?> m) {
      return b.setStructValue(toStruct(m)).build();
    }
    if (v instanceof CharSequence || v instanceof Character) {
      return b.setStringValue(v.toString()).build();
    }
    if (v instanceof Iterable<?> items) {
      ListValue.Builder list = ListValue.newBuilder();
      int i = 0;
      for (Object item : items) {
        list.addValues(at(i++, item));
      }
      return b.setListValue(list).build();
    }
    if (v.getClass().isArray()) {
      ListValue.Builder list = ListValue.newBuilder();
      for (int i = 0, n = Array.getLength(v); i < n; i++) {
        list.addValues(at(i, Array.get(v, i)));
      }
      return b.setListValue(list).build();
    }
    throw new Bad("a " + v.getClass().getName() + " is not a plain value");
  }

  private static Value at(int index, Object item) {
    try {
      return toValue(item);
    } catch (Bad e) {
      throw e.under("[" + index + "]");
    }
  }

  private static Struct toStruct(Map<?, ?> m) {
    Struct.Builder s = Struct.newBuilder();
    for (Map.Entry<?, ?> e : m.entrySet()) {
      String key = key(e.getKey());
      try {
        s.putFields(key, toValue(e.getValue()));
      } catch (Bad bad) {
        throw bad.under("." + key);
      }
    }
    return s.build();
  }

  private static String key(Object k) {
    if (k instanceof String s) {
      return s;
    }
    throw new Bad("a map key must be a String, not " + (k == null ? "null" : k.getClass().getName()));
  }

  private static double finite(Number n) {
    double d = n.doubleValue();
    if (Double.isNaN(d) || Double.isInfinite(d)) {
      throw new Bad(n + " is not a JSON number");
    }
    return d;
  }

  // ---- to JSON text -----------------------------------------------------------------

  private static void writeJson(JsonWriter w, Object v) throws IOException {
    if (v == null) {
      w.nullValue();
    } else if (v instanceof String s) {
      w.value(s);
    } else if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
      w.value(((Number) v).longValue());
    } else if (v instanceof Double || v instanceof Float) {
      w.value(finite((Number) v));
    } else if (v instanceof BigInteger || v instanceof BigDecimal) {
      w.value((Number) v); // their toString is a JSON number, every digit kept
    } else if (v instanceof Number n) {
      w.value(finite(n)); // AtomicLong and other Numbers: as their double
    } else if (v instanceof Boolean t) {
      w.value(t);
    } else if (v instanceof Map<?, ?> m) {
      w.beginObject();
      for (Map.Entry<?, ?> e : m.entrySet()) {
        String key = key(e.getKey());
        w.name(key);
        try {
          writeJson(w, e.getValue());
        } catch (Bad bad) {
          throw bad.under("." + key);
        }
      }
      w.endObject();
    } else if (v instanceof CharSequence || v instanceof Character) {
      w.value(v.toString());
    } else if (v instanceof Iterable<?> items) {
      w.beginArray();
      int i = 0;
      for (Object item : items) {
        writeAt(w, i++, item);
      }
      w.endArray();
    } else if (v.getClass().isArray()) {
      w.beginArray();
      for (int i = 0, n = Array.getLength(v); i < n; i++) {
        writeAt(w, i, Array.get(v, i));
      }
      w.endArray();
    } else {
      throw new Bad("a " + v.getClass().getName() + " is not a plain value");
    }
  }

  private static void writeAt(JsonWriter w, int index, Object item) throws IOException {
    try {
      writeJson(w, item);
    } catch (Bad e) {
      throw e.under("[" + index + "]");
    }
  }

  /** A Writer over an unsynchronized StringBuilder (StringWriter locks a StringBuffer). */
  private static final class StringBuilderWriter extends Writer {
    private final StringBuilder sb = new StringBuilder(256);

    @Override
    public void write(char[] buf, int off, int len) {
      sb.append(buf, off, len);
    }

    @Override
    public void write(String s, int off, int len) {
      sb.append(s, off, off + len);
    }

    @Override
    public void write(int c) {
      sb.append((char) c);
    }

    @Override
    public Writer append(CharSequence s) {
      sb.append(s);
      return this;
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}

    @Override
    public String toString() {
      return sb.toString();
    }
  }

  /**
   * A value that is not plain, with where it sits: the path is built as the exception
   * unwinds, so converting good values pays nothing for it.
   */
  private static final class Bad extends RuntimeException {
    private final String problem;
    private final String path;

    Bad(String problem) {
      this(problem, "");
    }

    private Bad(String problem, String path) {
      super(problem, null, false, false); // no stack trace: it is rethrown as reported()
      this.problem = problem;
      this.path = path;
    }

    Bad under(String segment) {
      return new Bad(problem, segment + path);
    }

    IllegalArgumentException reported(String what) {
      return new IllegalArgumentException("scorewire: " + what + ": $" + path + ": " + problem);
    }
  }
}
