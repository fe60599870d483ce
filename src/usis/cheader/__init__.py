"""The one C header reader every extract uses: `tokens` (comments, continuations, preprocessing
tokens), `preprocessor` (conditionals, macros, includes) and `declarations` (statements, function
prototypes and their canonical C rendering)."""
