package dev.scorewire.client;

/**
 * One offending field of a rejected request.
 *
 * @param field the path of the field inside the request, such as {@code checks[2].params.pattern}
 * @param description what is wrong with it
 */
public record FieldViolation(String field, String description) {}
