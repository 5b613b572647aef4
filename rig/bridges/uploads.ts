import { IUpload } from '@rocket.chat/apps-engine/definition/uploads';
import { IUploadDetails } from '@rocket.chat/apps-engine/definition/uploads/IUploadDetails';
import { UploadBridge } from '@rocket.chat/apps-engine/server/bridges';
import type { RigServer } from '../server';

/**
 * apps/meteor/app/apps/server/bridges/uploads.ts. The engine's doGetById / doGetBuffer return
 * undefined without `upload.read` (the app then gets null); UploadRead.getBufferById is
 * getById then getBuffer, two bridge calls.
 */
export class RigUploadBridge extends UploadBridge {
    constructor(private readonly rig: RigServer) {
        super();
    }

    /** converters/uploads.ts convertById: Uploads.findOneById, then convertToApp (undefined when there is none). */
    protected async getById(id: string, _appId: string): Promise<IUpload> {
        this.rig.calls.record('read', 'upload.getById');
        return this.rig.convert.upload(this.rig.store.uploads.get(id)) as IUpload;
    }

    /**
     * The debug line reads `upload.id` first (a missing upload fails there), then
     * convertToRocketChat and FileUpload.getBuffer, which picks the store handler by the
     * document's `store` and copies the file with that `_id` out of it.
     */
    protected async getBuffer(upload: IUpload, _appId: string): Promise<Buffer> {
        this.rig.calls.record('read', 'upload.getBuffer');
        void upload.id;
        return this.rig.fileBuffer(this.rig.convert.uploadFromApp(upload));
    }

    protected async createUpload(_details: IUploadDetails, _buffer: Buffer, _appId: string): Promise<IUpload> {
        throw new Error('The test rig does not model createUpload (upload.write) yet');
    }
}
