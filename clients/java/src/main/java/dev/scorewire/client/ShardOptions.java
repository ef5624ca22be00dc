package dev.scorewire.client;

import dev.scorewire.v1.CaseResult;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * How {@link ScorewireClient#runSuiteSharded} splits a batch: {@code
 * ShardOptions.of(3).withChunkCases(1000)}. Immutable; each {@code with} returns a copy.
 */
public final class ShardOptions {
  /** The most cases in one chunk (one RunSuite call) unless {@link #withChunkCases} says otherwise. */
  public static final int DEFAULT_CHUNK_CASES = 5000;
  /** How many times a chunk is sent, the first included, before the run fails. */
  public static final int DEFAULT_CHUNK_ATTEMPTS = 3;

  private final int shards;
  private final int chunkCases;
  private final int chunkAttempts;
  private final Consumer<List<CaseResult>> onChunk;

  private ShardOptions(int shards, int chunkCases, int chunkAttempts, Consumer<List<CaseResult>> onChunk) {
    this.shards = shards;
    this.chunkCases = chunkCases;
    this.chunkAttempts = chunkAttempts;
    this.onChunk = onChunk;
  }

  /**
   * {@code shards} chunks in flight at once (at least 1); the batch is split into at least
   * this many chunks.
   */
  public static ShardOptions of(int shards) {
    if (shards < 1) {
      throw new IllegalArgumentException("shards must be at least 1, not " + shards);
    }
    return new ShardOptions(shards, DEFAULT_CHUNK_CASES, DEFAULT_CHUNK_ATTEMPTS, null);
  }

  /** The most cases in one chunk (at least 1); default {@link #DEFAULT_CHUNK_CASES}. */
  public ShardOptions withChunkCases(int chunkCases) {
    if (chunkCases < 1) {
      throw new IllegalArgumentException("chunkCases must be at least 1, not " + chunkCases);
    }
    return new ShardOptions(shards, chunkCases, chunkAttempts, onChunk);
  }

  /** How many times a chunk is sent in all (at least 1); default {@link #DEFAULT_CHUNK_ATTEMPTS}. */
  public ShardOptions withChunkAttempts(int chunkAttempts) {
    if (chunkAttempts < 1) {
      throw new IllegalArgumentException("chunkAttempts must be at least 1, not " + chunkAttempts);
    }
    return new ShardOptions(shards, chunkCases, chunkAttempts, onChunk);
  }

  /**
   * Receives each chunk's results as the chunk finishes (one call at a time, on a shard's
   * thread), indexes already those of the request's cases.
   */
  public ShardOptions withOnChunk(Consumer<List<CaseResult>> onChunk) {
    return new ShardOptions(shards, chunkCases, chunkAttempts, Objects.requireNonNull(onChunk, "onChunk"));
  }

  /** Chunks in flight at once. */
  public int shards() {
    return shards;
  }

  /** The most cases in one chunk. */
  public int chunkCases() {
    return chunkCases;
  }

  /** Attempts of one chunk, the first included. */
  public int chunkAttempts() {
    return chunkAttempts;
  }

  /** The chunk listener, or {@code null}. */
  public Consumer<List<CaseResult>> onChunk() {
    return onChunk;
  }
}
