//! Stage 5: post-process compiled prompts and write outputs.
