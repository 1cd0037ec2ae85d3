import { describe, expect, it } from 'vitest';
import { errorType, httpAttributes, rpcAttributes } from '../src/attributes.js';

describe('attributes', () => {
  describe('httpAttributes', () => {
    it('splits an origin into server.address, server.port and url.scheme', () => {
      expect(httpAttributes('GET', 'http://127.0.0.1:8080')).toEqual({
        'http.request.method': 'GET',
        'server.address': '127.0.0.1',
        'server.port': 8080,
        'url.scheme': 'http',
      });
    });

    it('fills in the default port of the scheme', () => {
      expect(httpAttributes('GET', 'https://example.com')).toMatchObject({ 'server.port': 443, 'url.scheme': 'https' });
      expect(httpAttributes('GET', 'http://example.com')).toMatchObject({ 'server.port': 80 });
    });

    it('gives an IPv6 address without brackets', () => {
      expect(httpAttributes('GET', 'http://[::1]:9000')).toMatchObject({
        'server.address': '::1',
        'server.port': 9000,
      });
    });

    it('names a method outside the known set _OTHER, and keeps known ones (semantic conventions, http.request.method)', () => {
      expect(httpAttributes('PATCH', 'http://a')['http.request.method']).toBe('PATCH');
      expect(httpAttributes('QUERY', 'http://a')['http.request.method']).toBe('QUERY');
      expect(httpAttributes('get', 'http://a')['http.request.method']).toBe('_OTHER');
      expect(httpAttributes('PROPFIND', 'http://a')['http.request.method']).toBe('_OTHER');
    });

    it("has no server attributes for an opaque origin ('null')", () => {
      expect(httpAttributes('GET', 'null')).toEqual({ 'http.request.method': 'GET' });
    });

    it('keeps answering the same after many distinct origins (the cache starts over)', () => {
      for (let port = 1; port <= 600; port++)
        expect(httpAttributes('GET', `http://h:${port}`)['server.port']).toBe(port);
      expect(httpAttributes('GET', 'http://h:7')['server.port']).toBe(7);
    });
  });

  describe('rpcAttributes', () => {
    it('splits a method path into rpc.service and rpc.method', () => {
      expect(rpcAttributes('/shop.v1.Cart/Checkout')).toEqual({
        'rpc.system': 'grpc',
        'rpc.service': 'shop.v1.Cart',
        'rpc.method': 'Checkout',
      });
    });

    it('keeps a path without a service as the method', () => {
      expect(rpcAttributes('Checkout')).toEqual({ 'rpc.system': 'grpc', 'rpc.method': 'Checkout' });
    });
  });

  describe('errorType', () => {
    it("is the thrown object's class name, or the type of a thrown primitive", () => {
      expect(errorType(new RangeError('x'))).toBe('RangeError');
      expect(errorType(new (class QuotaError extends Error {})())).toBe('QuotaError');
      expect(errorType(Object.create(null))).toBe('Object');
      expect(errorType('oops')).toBe('string');
      expect(errorType(undefined)).toBe('undefined');
    });
  });
});
