import { describe, expect, it } from 'vitest';
import { controlFrameBytes, dataFrameBytes, receivedControlFrameBytes } from '../src/frame-size.js';
import { FakeSocket } from './helpers/fake-socket.js';

describe('frame-size', () => {
  describe('dataFrameBytes', () => {
    it('counts the header, the extended length and the mask of RFC 6455 §5.2', () => {
      const server = new FakeSocket().ws;
      const client = Object.assign(new FakeSocket(), { _isServer: false }).ws;
      expect(dataFrameBytes(server, 0)).toBe(2);
      expect(dataFrameBytes(server, 125)).toBe(127);
      expect(dataFrameBytes(server, 126)).toBe(130);
      expect(dataFrameBytes(server, 65_535)).toBe(65_539);
      expect(dataFrameBytes(server, 65_536)).toBe(65_546);
      expect(dataFrameBytes(client, 0)).toBe(6);
      expect(dataFrameBytes(client, 126)).toBe(134);
    });
  });

  describe('controlFrameBytes', () => {
    it("takes the heartbeat's own side when ws does not say which side a socket is", () => {
      const socket = new FakeSocket();
      delete (socket as { _isServer?: boolean })._isServer;
      expect(controlFrameBytes(socket.ws, 4)).toBe(6);
      expect(controlFrameBytes(socket.ws, 4, true)).toBe(10);
    });
  });

  describe('receivedControlFrameBytes', () => {
    it("counts the peer's mask: a server receives masked frames, a client unmasked ones", () => {
      const server = new FakeSocket().ws;
      const client = Object.assign(new FakeSocket(), { _isServer: false }).ws;
      expect(receivedControlFrameBytes(server, 0)).toBe(6);
      expect(receivedControlFrameBytes(client, 4)).toBe(6);
    });
  });
});
