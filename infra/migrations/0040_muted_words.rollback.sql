DROP TABLE muted_words;
