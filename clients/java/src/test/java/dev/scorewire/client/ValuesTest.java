package dev.scorewire.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ListValue;
import com.google.protobuf.NullValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.scorewire.v1.CheckSpec;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Plain Java values to Values and JSON text (no server: what is sent is pinned here). */
class ValuesTest {
  /** A map keeping the order it was written in, so JSON text can be compared whole. */
  private static Map<String, Object> ordered(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put((String) kv[i], kv[i + 1]);
    }
    return m;
  }

  private static Value str(String s) {
    return Value.newBuilder().setStringValue(s).build();
  }

  private static Value num(double d) {
    return Value.newBuilder().setNumberValue(d).build();
  }

  @Test
  void jsonWritesEveryPlainKindNested() {
    Map<String, Object> v =
        ordered(
            "s", "Paris",
            "i", 42,
            "d", 2.5,
            "b", true,
            "n", null,
            "list", List.of("a", 1L),
            "array", new int[] {1, 2},
            "nested", ordered("x", new String[] {"y"}));
    assertEquals(
        "{\"s\":\"Paris\",\"i\":42,\"d\":2.5,\"b\":true,\"n\":null,\"list\":[\"a\",1],"
            + "\"array\":[1,2],\"nested\":{\"x\":[\"y\"]}}",
        Values.json(v));
  }

  @Test
  void jsonEscapesControlCharactersQuotesAndKeepsUnicodeAndHtml() {
    // Control characters and quotes must be escaped; <, > and & need not be.
    assertEquals("\"a\\\"b\\\\c\\nd\\u0001 <é> & 日本\"", Values.json("a\"b\\c\nd\u0001 <é> & 日本"));
  }

  @Test
  void jsonKeepsEveryDigitOfLargeIntegersAndDecimals() {
    // 2^53 + 1 is not a double; a Long, a BigInteger and a BigDecimal travel exactly.
    assertEquals("9007199254740993", Values.json(9007199254740993L));
    assertEquals("123456789012345678901234567890", Values.json(new BigInteger("123456789012345678901234567890")));
    assertEquals("0.1000000000000000000001", Values.json(new BigDecimal("0.1000000000000000000001")));
  }

  @Test
  void jsonOfAScalarOrNullIsThatScalar() {
    // A top-level scalar is a JSON text of its own (expected: "Paris").
    assertEquals("\"Paris\"", Values.json("Paris"));
    assertEquals("null", Values.json(null));
    assertEquals("false", Values.json(false));
  }

  @Test
  void nonFiniteNumbersAreRefusedWithTheirPath() {
    // NaN is not JSON: refused in both forms, naming where it sits.
    Map<String, Object> v = ordered("items", List.of(ordered("qty", 1), ordered("qty", Double.NaN)));
    IllegalArgumentException j = assertThrows(IllegalArgumentException.class, () -> Values.json(v));
    assertTrue(j.getMessage().contains("$.items[1].qty"), j.getMessage());
    assertTrue(j.getMessage().contains("NaN"), j.getMessage());
    IllegalArgumentException p = assertThrows(IllegalArgumentException.class, () -> Values.value(v));
    assertTrue(p.getMessage().contains("$.items[1].qty"), p.getMessage());
    assertThrows(IllegalArgumentException.class, () -> Values.json(Float.POSITIVE_INFINITY));
  }

  @Test
  void anIntegerBeyondADoubleIsRefusedAsAValueButWrittenAsJson() {
    // 10^400 is no double: a Value would hold Infinity, which is not JSON; JSON text keeps it.
    BigInteger huge = BigInteger.TEN.pow(400);
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Values.value(List.of(huge)));
    assertTrue(e.getMessage().contains("$[0]") && e.getMessage().contains("Values.json"), e.getMessage());
    assertEquals("[" + huge + "]", Values.json(List.of(huge)));
  }

  @Test
  void aValueThatIsNotPlainIsRefusedWithItsPathAndType() {
    // An arbitrary object has no JSON form; it is named, not written as its toString.
    Map<String, Object> v = ordered("when", ordered("at", new Object()));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Values.json(v));
    assertTrue(e.getMessage().contains("$.when.at"), e.getMessage());
    assertTrue(e.getMessage().contains("java.lang.Object"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> Values.value(v));
  }

  @Test
  void aMapKeyThatIsNotAStringIsRefused() {
    // JSON object keys are strings; a number key is not silently stringified.
    Map<Object, Object> v = new LinkedHashMap<>();
    v.put(1, "one");
    assertThrows(IllegalArgumentException.class, () -> Values.json(v));
    assertThrows(IllegalArgumentException.class, () -> Values.value(v));
  }

  @Test
  void valueBuildsTheSameTreeAsTheMessagesWrittenByHand() {
    Map<String, Object> v = ordered("answer", "Paris", "must_include", Arrays.asList("a", null), "n", 3);
    Value expected =
        Value.newBuilder()
            .setStructValue(
                Struct.newBuilder()
                    .putFields("answer", str("Paris"))
                    .putFields(
                        "must_include",
                        Value.newBuilder()
                            .setListValue(
                                ListValue.newBuilder()
                                    .addValues(str("a"))
                                    .addValues(Value.newBuilder().setNullValue(NullValue.NULL_VALUE)))
                            .build())
                    .putFields("n", num(3)))
            .build();
    assertEquals(expected, Values.value(v));
  }

  @Test
  void checkCarriesItsTypeAndParamsAndNullParamsMeansNone() {
    CheckSpec spec = Values.check("length", ordered("max_chars", 400, "unit", 'c'));
    assertEquals("length", spec.getType());
    assertEquals(num(400), spec.getParams().getFieldsOrThrow("max_chars"));
    assertEquals(str("c"), spec.getParams().getFieldsOrThrow("unit"));
    assertFalse(Values.check("is_json", null).hasParams());
    List<Object> notPlain = new ArrayList<>(List.of(new Object()));
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> Values.check("regex", ordered("pattern", notPlain)));
    assertTrue(e.getMessage().contains("check regex params: $.pattern[0]"), e.getMessage());
  }
}
