// express 4 installed under the alias express4 (beside express 5): typed as express, whose API the tests use from both.
declare module 'express4' {
  import express from 'express';
  export default express;
}
