/** Largest JSON request body accepted (no endpoint takes one; anything bigger is a 413). */
export const JSON_BODY_LIMIT = '16kb';
